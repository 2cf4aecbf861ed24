// Linked with encoder_omp_passive_wait like the project's executables: prints
// on stderr what main sees of OMP_WAIT_POLICY and the process's name, then
// what libgomp took from its environment (omp_display_env: GOMP_SPINCOUNT is
// 0 when it waits passively), in that order, for tests/common/CMakeLists.txt.
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

int main() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  std::string comm;
  std::getline(std::ifstream("/proc/self/comm"), comm);
  std::fprintf(stderr, "main: OMP_WAIT_POLICY=%s comm=%s\n", policy ? policy : "(unset)",
               comm.c_str());
  omp_display_env(1);
  return 0;
}
