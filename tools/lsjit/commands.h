// The lsjit command-line tool: one function per subcommand. Each takes the arguments after
// the subcommand's name, writes to out/err and returns the process exit code (0 success,
// 1 failure, 2 bad usage).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace lsjit::cli {

using Args = std::vector<std::string>;

int trace_command(const Args& args, std::ostream& out, std::ostream& err);
int cache_command(const Args& args, std::ostream& out, std::ostream& err);  // lsjit cache
int solve_command(const Args& args, std::ostream& out, std::ostream& err);  // lsjit solve
int generate_command(const Args& args, std::ostream& out, std::ostream& err);  // lsjit generate
int replay_command(const Args& args, std::ostream& out, std::ostream& err);    // lsjit replay

}  // namespace lsjit::cli
