// W1: 1,000,000 no-op tasks from 1 producer into 2 workers (tasks/s).
#include "common/throughput.hpp"

int main(int argc, char** argv) { return bench::throughput_main(argc, argv, "W1", 1); }
