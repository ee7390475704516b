#include "child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "lsjit/common/clock.h"

namespace lsjit::bench {

void emit(const char* key, double value) { std::printf("%s %.17g\n", key, value); }

double status_mb(const char* field) {
  std::ifstream status("/proc/self/status");
  const std::string prefix = std::string(field) + ":";
  for (std::string line; std::getline(status, line);)
    if (line.rfind(prefix, 0) == 0) return std::atof(line.c_str() + prefix.size()) / 1024.0;  // kB
  return -1;
}

Record run_self(const std::vector<std::string>& args) { return run_program("/proc/self/exe", args); }

Record run_program(const std::string& program, const std::vector<std::string>& args) {
  std::string described = program;
  for (const std::string& a : args) described += " " + a;
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("pipe failed");
  std::fflush(stdout);  // the child would otherwise inherit this process's unwritten output
  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  close(fd[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const double process_s = seconds_since(start);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("child failed: " + described);
  Record r;
  std::istringstream lines(out);
  for (std::string key; lines >> key;) lines >> r[key];
  r.emplace("process_s", process_s);
  return r;
}

}  // namespace lsjit::bench
