//===- RecurrentTest.cpp - TFLite sequence LSTM and RNN (state) -----------===//
//
// The state folders of tests/data/state (tests/reference/
// make_recurrent_cases.mjs): UNIDIRECTIONAL_SEQUENCE_LSTM (plain, CIFG,
// peephole, projection with clip, layer norm, time_major, cell_clip,
// RELU/RELU6 activations, batch 2), UNIDIRECTIONAL_SEQUENCE_RNN (TANH,
// RELU, NONE), BIDIRECTIONAL_SEQUENCE_LSTM (merged and separate outputs),
// TensorFlow Lite Micro's mnist_lstm model (float32 and int8) and its DTLN
// model (two int8 LSTMs; make_int8_recurrent_cases.mjs; integers compared
// exactly). Their three invocations each (step 0 at the folder's top,
// step_1/, step_2/) are run in order on one module and compared with
// TensorFlow Lite 2.9 by StateTest.cpp (kiln_state_tests), which runs every
// folder of tests/data/state; the scripts check the stored outputs against
// their own evaluations. Here: the folders are all present with their steps.
//
// The refused models (tests/data/state/refused) give one error line naming
// the operator, the tensor and what is supported.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"

#include <filesystem>

using namespace kiln::test;

namespace {

std::string stateDir() { return std::string(KILN_TEST_DATA_DIR) + "/state"; }

std::vector<std::string> listCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(stateDir(), ec))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "model.tflite"))
      cases.push_back(entry.path().filename().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

TEST(Recurrent, CasesArePresent) {
  std::vector<std::string> cases = listCases();
  EXPECT_GE(cases.size(), 20u);
  EXPECT_NE(std::find(cases.begin(), cases.end(), "tflm_mnist_lstm"), cases.end());
  // The integer LSTM (int16 cell state; TFLiteQuantizedRecurrentOps.cpp):
  // TensorFlow Lite Micro's int8 mnist_lstm, refused until it was converted,
  // and DTLN; TFLite 2.9's integer arithmetic, compared exactly.
  EXPECT_NE(std::find(cases.begin(), cases.end(), "tflm_mnist_lstm_int8"), cases.end());
  EXPECT_NE(std::find(cases.begin(), cases.end(), "tflm_dtln"), cases.end());
  for (const std::string &c : cases)
    for (const char *step : {"step_1", "step_2"})
      EXPECT_TRUE(std::filesystem::exists(stateDir() + "/" + c + "/" + step + "/output_0.npy"))
          << c << "/" << step;
}

TEST(Recurrent, RefusalsAreOneExactLine) {
  struct Refusal {
    const char *file;
    const char *message;
  };
  const Refusal refusals[] = {
      {"lstm_rank2_input.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 0 (input 'x') has shape [4,3]; expected "
       "[batch, time, input_size], static and positive"},
      {"lstm_missing_forget_weights.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input-to-forget weights (input 2) and "
       "recurrent-to-forget weights (input 6) must be [n_cell, n_input] and [n_cell, n_output]; "
       "they are missing and [5,5]"},
      {"lstm_missing_cell_bias.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 14 (cell gate bias) is missing; it is "
       "required"},
      {"lstm_state_not_variable.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 18 (output state 'lstm/output_state') "
       "is not a variable tensor (is_variable); TFLite keeps the state in one"},
      {"lstm_sign_bit_activation.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): fused_activation_function SIGN_BIT is not "
       "supported (supported: TANH, RELU, RELU_N1_TO_1, RELU6)"},
      {"lstm_none_activation.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): fused_activation_function NONE is not "
       "supported (supported: TANH, RELU, RELU_N1_TO_1, RELU6)"},
      {"lstm_negative_cell_clip.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): cell_clip -1 is not supported (0 for no "
       "clipping, or a positive bound)"},
      {"lstm_wrong_recurrent_shape.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 7 (cell-gate recurrent weights "
       "'lstm/bad_recurrent') has shape [5,4]; expected [5,5]"},
      {"lstm_hybrid_int8_weights.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): hybrid LSTM (float32 input, INT8 input 3 "
       "(weights 'lstm/cell_input_weights_int8')) is not supported; Kiln converts float32 LSTM "
       "with float32 weights"},
      {"rnn_state_not_variable.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_RNN): input 4 (hidden state 'h') is not a variable "
       "tensor (is_variable); TFLite keeps the state in one"},
      {"rnn_missing_bias.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_RNN): input 3 (bias) is missing; it is required"},
      {"bilstm_aux_input.tflite",
       "operator #0 (BIDIRECTIONAL_SEQUENCE_LSTM): the auxiliary input form (inputs 39 to 47; "
       "input 39 (auxiliary 'aux') is given) is not supported; Kiln converts the bidirectional "
       "LSTM without auxiliary input"},
      // The integer LSTM (make_int8_recurrent_cases.mjs).
      {"int8_lstm_peephole.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 9 (peephole weights 'cell_to_input') is "
       "given: the int8 LSTM with peephole is not supported yet"},
      {"int8_lstm_projection.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 16 (projection 'projection') is given: "
       "the int8 LSTM with projection is not supported yet"},
      {"int8_lstm_layer_norm.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 20 (layer-norm coefficients "
       "'layer_norm_input') is given: the int8 LSTM with layer norm is not supported yet"},
      {"int8_lstm_relu.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): fused_activation_function RELU is not "
       "supported by the integer LSTM (TFLite's integer kernel uses TANH)"},
      {"int8_lstm_cell_scale_not_pot.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 19 (cell state 'cell_state') has scale "
       "0.0003 and zero point 0; the integer LSTM needs a power-of-two scale (its cell arithmetic "
       "shifts by the log2) and zero point 0"},
      {"int8_lstm_no_intermediates.tflite",
       "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): has no fifth intermediate tensor; TFLite's "
       "integer LSTM reads the hidden state's scale and zero point from it"},
  };
  TempDir tmp;
  for (const Refusal &r : refusals) {
    std::string model = stateDir() + "/refused/" + r.file;
    ASSERT_TRUE(std::filesystem::exists(model)) << model;
    CommandResult c = runCommand(kilnBinary() + " compile " + shellQuote(model) + " -o " +
                                 shellQuote(tmp.file("m.kiln")));
    EXPECT_EQ(c.exitCode, 1) << r.file << ": " << c.output;
    EXPECT_EQ(c.output, std::string("kiln: error: ") + r.file + ": " + r.message + "\n");
    EXPECT_FALSE(std::filesystem::exists(tmp.file("m.kiln")));
  }
}

} // namespace
