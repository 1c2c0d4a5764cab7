// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-hoist-static-allocas))' | FileCheck %s

// Static allocas whose allocation scope is the function (the window before
// the loop, the accumulator after it) move to the start of the entry block,
// keeping their order and their uses; one with a dynamic size stays where it
// is (its size operand is computed there), as does one inside scf.for,
// itself an allocation scope (a stack object per iteration).

// CHECK-LABEL: func.func @kernel
// CHECK-NEXT:    %[[WINDOW:.*]] = memref.alloca() : memref<64xi8>
// CHECK-NEXT:    %[[ACC:.*]] = memref.alloca() : memref<8x32xi32>
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %[[WINDOW]]
// CHECK-NEXT:      memref.alloca() : memref<4xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.alloca(%{{.*}}) : memref<?xi32>
// CHECK-NEXT:    memref.load %[[ACC]]
func.func @kernel(%n: index, %src: memref<64xi8>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %window = memref.alloca() : memref<64xi8>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %src[%i] : memref<64xi8>
    memref.store %v, %window[%i] : memref<64xi8>
    %scratch = memref.alloca() : memref<4xi32>
  }
  %acc = memref.alloca() : memref<8x32xi32>
  %dyn = memref.alloca(%n) : memref<?xi32>
  %r = memref.load %acc[%c0, %c0] : memref<8x32xi32>
  return %r : i32
}
