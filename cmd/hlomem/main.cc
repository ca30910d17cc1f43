#include "cmd/hlomem/cli.h"

int main(int argc, char** argv) { return hlomem::cli::Main(argc, argv); }
