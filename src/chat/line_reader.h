// Where `kforge chat` reads its commands: on a terminal, libedit's line editing with history
// (kept in data_dir()/chat_history) and completion of command names; on a pipe, plain lines,
// so scripts and tests drive the session through stdin.
//
//   LineReader in(Session::command_names());
//   while (auto line = in.read("kforge> ")) run(*line);   // nullopt at the end of input
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kf::chat {

class LineReader {
 public:
  explicit LineReader(std::vector<std::string> words);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, without its newline; nullopt at the end of the input (Ctrl-D).
  std::optional<std::string> read(const std::string& prompt);
  bool interactive() const { return interactive_; }

 private:
  bool interactive_ = false;
  std::string history_file_;
};

}  // namespace kf::chat
