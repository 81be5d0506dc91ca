// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
// rdmactl: thin main; the verbs live in the command table.

#include <cstdio>

#include "client/rdmactl/rdmactl.h"

int main(int argc, char** argv) { return rdmactl::Run({argv + 1, argv + argc}, stdout, stderr); }
