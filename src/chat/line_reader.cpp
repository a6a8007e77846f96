#include "chat/line_reader.h"

#include <editline/readline.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "support/fs.h"

namespace kf::chat {
namespace {

// Lines kept in the history file.
constexpr int kHistoryLines = 1000;

// The words completion offers: readline's callbacks take no context, and one reader is open
// at a time.
std::vector<std::string>* g_words = nullptr;

char* next_word(const char* text, int state) {
  static size_t i = 0;
  if (state == 0) i = 0;
  const size_t n = std::strlen(text);
  while (g_words && i < g_words->size()) {
    const std::string& w = (*g_words)[i++];
    if (w.compare(0, n, text) == 0) return strdup(w.c_str());  // readline frees it
  }
  return nullptr;
}

// Completes the first word of a line only: the rest are arguments.
char** complete(const char* text, int start, int) {
  rl_attempted_completion_over = 1;
  return start == 0 ? rl_completion_matches(text, next_word) : nullptr;
}

}  // namespace

LineReader::LineReader(std::vector<std::string> words)
    : interactive_(isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
  if (!interactive_) return;
  g_words = new std::vector<std::string>(std::move(words));
  rl_attempted_completion_function = complete;
  using_history();
  stifle_history(kHistoryLines);
  std::error_code ec;
  std::filesystem::create_directories(data_dir(), ec);
  history_file_ = (data_dir() / "chat_history").string();
  read_history(history_file_.c_str());
}

LineReader::~LineReader() {
  if (!interactive_) return;
  write_history(history_file_.c_str());
  delete g_words;
  g_words = nullptr;
}

std::optional<std::string> LineReader::read(const std::string& prompt) {
  if (!interactive_) {
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    return line;
  }
  char* raw = readline(prompt.c_str());
  if (!raw) return std::nullopt;
  std::string line(raw);
  std::free(raw);
  if (line.find_first_not_of(" \t") != std::string::npos) add_history(line.c_str());
  return line;
}

}  // namespace kf::chat
