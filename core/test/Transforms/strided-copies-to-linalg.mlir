// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-strided-copies-to-linalg))' | FileCheck %s

// %buf is 6x6, row-major. The 3x3 window at [1, 2] starts at 1*6 + 2 = 8
// and keeps row stride 6: not contiguous, so it becomes linalg.copy. The
// 2x6 window at [1, 0] (two whole rows, offset 6) and the 1x3 window at
// [2, 1] (part of one row, offset 13) are contiguous and stay memref.copy (a
// memcpy), in order; the self copies (memref.copy and linalg.copy) vanish.

// CHECK-LABEL: func.func @copies
// CHECK-SAME:    (%[[BUF:.*]]: memref<6x6xf32>, %[[OUT:.*]]: memref<3x3xf32>, %[[ROWS:.*]]: memref<2x6xf32>, %[[ROW:.*]]: memref<1x3xf32>, %[[WHOLE:.*]]: memref<6x6xf32>)
// CHECK:         %[[WINDOW:.*]] = memref.subview %[[BUF]][1, 2] [3, 3] [1, 1]
// CHECK-NEXT:    linalg.copy ins(%[[WINDOW]] : {{.*}}) outs(%[[OUT]] : memref<3x3xf32>)
// CHECK:         memref.copy %{{.*}}, %[[ROWS]]
// CHECK:         memref.copy %{{.*}}, %[[ROW]]
// CHECK-NEXT:    memref.copy %[[BUF]], %[[WHOLE]]
// CHECK-NEXT:    return
// CHECK-NOT:     copy
func.func @copies(%buf: memref<6x6xf32>, %out: memref<3x3xf32>,
                  %rows: memref<2x6xf32>, %row: memref<1x3xf32>,
                  %whole: memref<6x6xf32>) {
  %window = memref.subview %buf[1, 2] [3, 3] [1, 1]
      : memref<6x6xf32> to memref<3x3xf32, strided<[6, 1], offset: 8>>
  memref.copy %window, %out
      : memref<3x3xf32, strided<[6, 1], offset: 8>> to memref<3x3xf32>
  %two = memref.subview %buf[1, 0] [2, 6] [1, 1]
      : memref<6x6xf32> to memref<2x6xf32, strided<[6, 1], offset: 6>>
  memref.copy %two, %rows
      : memref<2x6xf32, strided<[6, 1], offset: 6>> to memref<2x6xf32>
  %part = memref.subview %buf[2, 1] [1, 3] [1, 1]
      : memref<6x6xf32> to memref<1x3xf32, strided<[6, 1], offset: 13>>
  memref.copy %part, %row
      : memref<1x3xf32, strided<[6, 1], offset: 13>> to memref<1x3xf32>
  memref.copy %buf, %whole : memref<6x6xf32> to memref<6x6xf32>
  memref.copy %whole, %whole : memref<6x6xf32> to memref<6x6xf32>
  linalg.copy ins(%out : memref<3x3xf32>) outs(%out : memref<3x3xf32>)
  return
}

// -----

// A copy into a strided target (the out parameter side) is also strided.

// CHECK-LABEL: func.func @scatter
// CHECK-SAME:    (%[[SRC:.*]]: memref<3x3xf32>, %[[BUF:.*]]: memref<6x6xf32>)
// CHECK:         %[[WINDOW:.*]] = memref.subview %[[BUF]][0, 3] [3, 3] [1, 1]
// CHECK-NEXT:    linalg.copy ins(%[[SRC]] : memref<3x3xf32>) outs(%[[WINDOW]] : {{.*}})
// CHECK-NOT:     memref.copy
func.func @scatter(%src: memref<3x3xf32>, %buf: memref<6x6xf32>) {
  %window = memref.subview %buf[0, 3] [3, 3] [1, 1]
      : memref<6x6xf32> to memref<3x3xf32, strided<[6, 1], offset: 3>>
  memref.copy %src, %window
      : memref<3x3xf32> to memref<3x3xf32, strided<[6, 1], offset: 3>>
  return
}
