// RUN: kiln-opt %s --kiln-order-globals | FileCheck %s

// Globals are named and placed by their first use (reproducible builds):
// the one @a reads first (1.0) becomes __constant_0_2xf32, @b's (2.0)
// __constant_1_2xf32; both come first in the module, in that order, and
// the reads use the new names.

// CHECK:       module {
// CHECK-NEXT:    memref.global "private" constant @__constant_0_2xf32 : memref<2xf32> = dense<1.000000e+00>
// CHECK-NEXT:    memref.global "private" constant @__constant_1_2xf32 : memref<2xf32> = dense<2.000000e+00>
// CHECK-NEXT:    func.func @a()
// CHECK-NEXT:      memref.get_global @__constant_0_2xf32 : memref<2xf32>
// CHECK:         func.func @b()
// CHECK-NEXT:      memref.get_global @__constant_1_2xf32 : memref<2xf32>
memref.global "private" constant @__constant_2xf32_0 : memref<2xf32> = dense<2.0>
memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<1.0>
func.func @a() -> memref<2xf32> {
  %g = memref.get_global @__constant_2xf32 : memref<2xf32>
  return %g : memref<2xf32>
}
func.func @b() -> memref<2xf32> {
  %g = memref.get_global @__constant_2xf32_0 : memref<2xf32>
  return %g : memref<2xf32>
}
