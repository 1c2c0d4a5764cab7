// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-propagate-nan))' | FileCheck %s

// max of two values keeps arith.maxf (which drops a NaN) for ordered
// inputs and selects a + b, a NaN, when either is NaN (cmpf uno).

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32)
// CHECK-NEXT:    %[[MAX:.*]] = arith.maxf %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[NAN]], %[[SUM]], %[[MAX]] : f32
// CHECK-NEXT:    return %[[R]] : f32
func.func @f(%a: f32, %b: f32) -> f32 {
  %m = arith.maxf %a, %b : f32
  return %m : f32
}

// -----

// A constant bound (a vector relu) moves second and needs no NaN test of
// its own: only the argument is tested, and selected when it is NaN.

// CHECK-LABEL: func.func @relu(
// CHECK-SAME:    %[[A:[^:]*]]: vector<4xf32>)
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK-NEXT:    %[[MAX:.*]] = arith.maxf %[[A]], %[[ZERO]] : vector<4xf32>
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : vector<4xf32>
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[NAN]], %[[A]], %[[MAX]] : vector<4xi1>, vector<4xf32>
// CHECK-NEXT:    return %[[R]] : vector<4xf32>
func.func @relu(%a: vector<4xf32>) -> vector<4xf32> {
  %z = arith.constant dense<0.0> : vector<4xf32>
  %m = arith.maxf %z, %a : vector<4xf32>
  return %m : vector<4xf32>
}
