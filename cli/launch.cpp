#include "cli/launch.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "data/cpu_cores.h"
#include "data/errors.h"

namespace foxeval {
namespace {

constexpr const char* kFlag = "--nproc-per-node";

volatile sig_atomic_t g_forward = 0;  // a SIGINT/SIGTERM to pass on to the children
void remember_signal(int sig) { g_forward = sig; }

int64_t parse_count(const std::string& text) {
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 1 || n > 1024)
    throw Error(fmt::format("{} {}: expected a number of processes in 1..1024", kFlag, text));
  return n;
}

// A port nobody listens on now (the kernel picks it); rank 0 binds it a moment later, as torchrun's
// --standalone does.
int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(fmt::format("{}: cannot open a socket to find a free port: {}", kFlag, std::strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) throw Error(fmt::format("{}: cannot find a free port on 127.0.0.1: {}", kFlag, std::strerror(err)));
  return ntohs(a.sin_port);
}

void set_env(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

pid_t start_child(const std::vector<char*>& args, int64_t rank, int64_t world, int port) {
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(fmt::format("{}: cannot start process {}: {}", kFlag, rank, std::strerror(errno)));
  if (pid > 0) return pid;
  if (world > 1) {
    set_env("MASTER_ADDR", "127.0.0.1");
    set_env("MASTER_PORT", std::to_string(port));
    set_env("RANK", std::to_string(rank));
    set_env("LOCAL_RANK", std::to_string(rank));
    set_env("WORLD_SIZE", std::to_string(world));
    set_env("LOCAL_WORLD_SIZE", std::to_string(world));
  }
  ::execv("/proc/self/exe", args.data());
  std::fprintf(stderr, "foxeval: error: %s: cannot run /proc/self/exe: %s\n", kFlag, std::strerror(errno));
  std::_Exit(127);
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

std::optional<int> launch_local_processes(int argc, char** argv) {
  if (argc < 2) return std::nullopt;
  const std::string first = argv[1];
  std::string count;
  int rest = 0;  // index of the first argument of the command to run
  if (first == kFlag) {
    if (argc < 3) throw Error(fmt::format("{} needs a number of processes", kFlag));
    count = argv[2];
    rest = 3;
  } else if (first.rfind(std::string(kFlag) + "=", 0) == 0) {
    count = first.substr(std::strlen(kFlag) + 1);
    rest = 2;
  } else {
    return std::nullopt;
  }
  const int64_t world = parse_count(count);
  for (const char* v : {"RANK", "WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"})
    if (const char* s = std::getenv(v); s && *s && world > 1)
      throw Error(fmt::format("{} {}: this process is already one of a launcher's ranks ({}={}); use one launcher",
                              kFlag, world, v, s));
  if (rest >= argc) throw Error(fmt::format("{} {}: no command to run (e.g. {} 2 niah run ...)", kFlag, world, kFlag));

  std::vector<char*> args{argv[0]};
  for (int i = rest; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  const int port = world > 1 ? free_local_port() : 0;
  if (world > 1 && !std::getenv("OMP_NUM_THREADS")) {
    set_env("OMP_NUM_THREADS", std::to_string(std::max<int64_t>(1, usable_cores().cores / world)));
  }
  if (world > 1)
    std::fprintf(stderr, "[foxeval] %lld processes on this machine (RANK 0..%lld, store at 127.0.0.1:%d)\n",
                 static_cast<long long>(world), static_cast<long long>(world - 1), port);

  // Handlers before the children exist, so a signal in between is not lost; no SA_RESTART, so
  // waitpid returns to pass it on.
  struct sigaction sa{}, old_int{}, old_term{};
  sa.sa_handler = remember_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);

  std::vector<pid_t> pids;
  for (int64_t r = 0; r < world; ++r) pids.push_back(start_child(args, r, world, port));
  std::fflush(stderr);

  int result = 0;
  int64_t live = world;
  bool stopping = false;
  auto stop_others = [&](int sig) {
    for (pid_t p : pids)
      if (p > 0) ::kill(p, sig);
  };
  while (live > 0) {
    if (g_forward) {  // arrived while we were not in waitpid
      stop_others(g_forward);
      g_forward = 0;
      stopping = true;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno != EINTR) break;
      continue;
    }
    int64_t rank = -1;
    for (size_t i = 0; i < pids.size(); ++i)
      if (pids[i] == pid) rank = static_cast<int64_t>(i), pids[i] = -1;
    if (rank < 0) continue;
    --live;
    const int code = exit_code(status);
    if (code != 0 && result == 0) {
      result = code;
      if (live > 0 && !stopping) {
        std::fprintf(stderr, "[foxeval] rank %lld exited with %s %d: stopping the other ranks (SIGTERM)\n",
                     static_cast<long long>(rank), WIFSIGNALED(status) ? "signal" : "code",
                     WIFSIGNALED(status) ? WTERMSIG(status) : code);
        stop_others(SIGTERM);
        stopping = true;
      }
    }
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return result;
}

}  // namespace foxeval
