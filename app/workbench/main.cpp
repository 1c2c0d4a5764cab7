//===- main.cpp - kiln-workbench ------------------------------------------===//
#include "Workbench.h"

int main(int argc, char **argv) { return kiln::workbench::runWorkbench(argc, argv); }
