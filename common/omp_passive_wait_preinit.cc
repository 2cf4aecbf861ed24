// Makes libgomp (the OpenMP runtime of the engine and of oneDNN) wait for
// work by sleeping rather than spinning, unless the user chose
// (OMP_WAIT_POLICY or GOMP_SPINCOUNT set). When another process takes a
// core, a spinning thread burns the time slices the thread it waits for
// needs (bench/README.md, "Threads under contention").
//
// libgomp reads those variables once, in its library constructor, before
// main. An executable's .preinit_array runs earlier still, but before libc
// has set `environ` (libc's own initializer then sets it to the kernel's
// array), so a setenv there is lost. So the program restarts itself once,
// from .preinit_array, before any library has initialized: execve of the
// same file with the same arguments and the environment plus
// OMP_WAIT_POLICY=passive (same pid, a few milliseconds). If that fails
// (no /proc), it carries on with libgomp's default.
//
// Linked into each executable as an object (CMake target
// encoder_omp_passive_wait): an unreferenced member of a static library
// would be dropped. Compiled without sanitizers: before their runtimes
// initialize, instrumented code would touch shadow memory that is not there.
#include <alloca.h>
#include <limits.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstddef>

namespace {

// libc is not initialized yet: no getenv, no malloc, no stdio; plain loops
// and system calls only.
bool OmpPreinitEntryNames(const char* entry, const char* name_with_equals) {
  for (; *name_with_equals != '\0'; ++entry, ++name_with_equals) {
    if (*entry != *name_with_equals) return false;
  }
  return true;
}

void RestartWithPassiveOmpWait(int /*argc*/, char** argv, char** envp) {
  if (envp == nullptr || argv == nullptr) return;
  // No interpreter: a static program, or the dynamic loader run as a command
  // ("ld.so ./program"), whose /proc/self/exe is the loader.
  if (getauxval(AT_BASE) == 0) return;
  size_t count = 0;
  for (; envp[count] != nullptr; ++count) {
    if (OmpPreinitEntryNames(envp[count], "OMP_WAIT_POLICY=") ||
        OmpPreinitEntryNames(envp[count], "GOMP_SPINCOUNT=")) {
      return;  // the user's choice stands (and the restarted program stops here)
    }
  }
  // The real path, not /proc/self/exe: the kernel names the process after
  // the file executed, and ps, top and pkill should still see its name.
  char path[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) return;
  path[length] = '\0';
  if (count > 65536) return;  // not worth a large stack array
  char** environment = static_cast<char**>(alloca((count + 2) * sizeof(char*)));
  for (size_t i = 0; i < count; ++i) environment[i] = envp[i];
  static char passive[] = "OMP_WAIT_POLICY=passive";
  environment[count] = passive;
  environment[count + 1] = nullptr;
  execve(path, argv, environment);  // returns only on failure
}

__attribute__((section(".preinit_array"),
               used)) void (*omp_passive_wait_preinit_entry)(int, char**,
                                                             char**) = RestartWithPassiveOmpWait;

}  // namespace
