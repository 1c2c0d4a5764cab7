//===- Usage.cpp - kiln's command-line usage errors and help --------------===//
#include "Usage.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <unistd.h>

namespace kiln::cli {

char UsageError::ID = 0;

llvm::Error usageError(const llvm::Twine &message) {
  return llvm::make_error<UsageError>(message.str());
}

llvm::Error asUsageError(llvm::Error err) {
  if (!err)
    return err;
  return usageError(llvm::toString(std::move(err)));
}

namespace {

/// LLVM's own options every command accepts.
bool isBuiltinFlag(llvm::StringRef name) {
  return name == "help" || name == "version" || name == "help-list" || name == "h" ||
         name == "help-hidden" || name == "help-list-hidden";
}

/// `name` as the user writes it: -o, --tile.
std::string spelled(llvm::StringRef name) {
  return (name.size() == 1 ? "-" : "--") + name.str();
}

llvm::cl::SubCommand *findCommand(llvm::StringRef name) {
  for (llvm::cl::SubCommand *sub : llvm::cl::getRegisteredSubcommands())
    if (sub->getName() == name && !name.empty())
      return sub;
  return nullptr;
}

std::vector<std::string> commandNames() {
  std::vector<std::string> names;
  for (llvm::cl::SubCommand *sub : llvm::cl::getRegisteredSubcommands())
    if (!sub->getName().empty())
      names.push_back(sub->getName().str());
  llvm::sort(names);
  return names;
}

/// The closest of `candidates` to `word` within edit distance 2, or "".
std::string closest(llvm::StringRef word, const std::vector<std::string> &candidates) {
  std::string best;
  unsigned bestDistance = 3;
  for (const std::string &c : candidates) {
    unsigned d = word.edit_distance(c, true, bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

/// The flags `sub` takes: options of `category` registered for it.
std::vector<std::string> flagsOf(llvm::cl::SubCommand &sub, llvm::cl::OptionCategory &category) {
  std::vector<std::string> names;
  for (const auto &entry : llvm::cl::getRegisteredOptions(sub))
    if (llvm::is_contained(entry.second->Categories, &category))
      names.push_back(entry.first().str());
  return names;
}

/// Checks the flags after the command `sub` (args[first, end)).
llvm::Error checkFlags(const std::vector<std::string> &args, size_t first,
                       llvm::cl::SubCommand &sub, llvm::cl::OptionCategory &category) {
  const std::string command = sub.getName().str();
  const llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions(sub);
  llvm::StringMap<std::string> given; // single-valued flags seen: name -> argument
  for (size_t i = first; i < args.size(); ++i) {
    llvm::StringRef arg(args[i]);
    if (arg == "--")
      break;
    if (arg.size() < 2 || arg[0] != '-')
      continue;
    llvm::StringRef flag = arg.drop_front(arg.startswith("--") ? 2 : 1);
    auto [name, value] = flag.split('=');
    auto found = options.find(name);
    bool known = found != options.end() &&
                 (isBuiltinFlag(name) || llvm::is_contained(found->second->Categories, &category));
    if (known) {
      llvm::cl::Option *option = found->second;
      const bool needsValue = option->getValueExpectedFlag() == llvm::cl::ValueRequired;
      // An empty value (--atol=, -o "", --check-bounds=) would parse as 0,
      // "" or true: refused.
      if (flag.contains('=') && value.empty())
        return usageError(spelled(name) + "= needs a value ('kiln help " + command +
                          "' describes it)");
      if (!flag.contains('=') && needsValue && i + 1 < args.size() && args[i + 1].empty())
        return usageError(spelled(name) + " needs a value, not an empty argument ('kiln help " +
                          command + "' describes it)");
      // A single-valued flag given twice: which one was meant?
      if (option->getNumOccurrencesFlag() == llvm::cl::Optional && !isBuiltinFlag(name)) {
        // As typed: `--output=a.kiln`, or `-o a.kiln` with its separate value.
        std::string typed = arg.str();
        if (!flag.contains('=') && needsValue && i + 1 < args.size())
          typed += " " + args[i + 1];
        auto [at, fresh] = given.try_emplace(name, typed);
        if (!fresh)
          return usageError(spelled(name) + " is given twice ('" + at->second + "' and '" + typed +
                            "'); give it once");
      }
      // `-o FILE`: the next argument is the value, even if it starts with '-'.
      if (!flag.contains('=') && needsValue)
        ++i;
      continue;
    }
    std::string hint = closest(name, flagsOf(sub, category));
    std::string suggestion =
        hint.empty() ? ""
                     : "; did you mean " + spelled(hint) +
                           (flag.contains('=') ? "=" + value.str() : "") + "?";
    return usageError("kiln " + command + " takes no flag '" + arg + "'" + suggestion +
                      " ('kiln help " + command + "' lists its flags)");
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<std::string>>
checkArguments(const std::vector<std::string> &args, llvm::cl::OptionCategory &category) {
  const std::string commands = llvm::join(commandNames(), ", ");
  if (args.size() < 2)
    return usageError("no command given; commands: " + commands +
                      " ('kiln help COMMAND' describes one)");
  llvm::StringRef first(args[1]);
  if (first == "help") {
    if (args.size() == 2)
      return std::vector<std::string>{args[0], "--help"};
    if (args.size() == 3 && findCommand(args[2]))
      return std::vector<std::string>{args[0], args[2], "--help"};
    return usageError("kiln help takes one command name (" + commands + "), " +
                      (args.size() == 3 ? "not '" + args[2] + "'"
                                        : std::to_string(args.size() - 2) + " given"));
  }
  if (first.startswith("-")) {
    llvm::StringRef name = first.drop_front(first.startswith("--") ? 2 : 1);
    if (isBuiltinFlag(name.split('=').first)) {
      if (args.size() == 2)
        return args;
      return usageError("'" + first + "' takes nothing after it; for a command's help: "
                        "kiln help COMMAND");
    }
    std::string hint = closest(name, {"help", "version"});
    return usageError("'" + first + "' is not a flag of kiln itself" +
                      (hint.empty() ? "" : "; did you mean --" + hint + "?") +
                      " (give a command first: " + commands + ", e.g. 'kiln compile MODEL')");
  }
  llvm::cl::SubCommand *sub = findCommand(first);
  if (!sub) {
    std::string hint = closest(first, commandNames());
    return usageError("'" + first + "' is not a command" +
                      (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                      " (commands: " + commands + ")");
  }
  if (llvm::Error err = checkFlags(args, 2, *sub, category))
    return std::move(err);
  return args;
}

llvm::Error parseArguments(const std::vector<std::string> &args, llvm::StringRef overview) {
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  // Some of the parser's messages (a flag value of the wrong type) go to
  // llvm::errs() whatever stream it is given: stderr is captured into a
  // temporary file while it runs.
  std::string captured;
  llvm::raw_string_ostream errs(captured);
  std::FILE *tmp = std::tmpfile();
  int saved = tmp ? dup(STDERR_FILENO) : -1;
  if (saved >= 0)
    dup2(fileno(tmp), STDERR_FILENO);
  bool ok = llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(),
                                              overview, &errs);
  llvm::errs().flush();
  if (saved >= 0) {
    dup2(saved, STDERR_FILENO);
    close(saved);
    std::rewind(tmp);
    char chunk[512];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, tmp)) > 0)
      errs << llvm::StringRef(chunk, got);
  }
  if (tmp)
    std::fclose(tmp);
  if (ok) {
    llvm::errs() << errs.str(); // nothing expected; never swallow it
    return llvm::Error::success();
  }
  // LLVM's messages, one per line, each "<program>: <text>", some with a
  // "Try: '<program> --help'" or "See: <program> --help" tail: one line.
  std::string program = llvm::sys::path::filename(args[0]).str();
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(errs.str()).split(lines, '\n', -1, false);
  std::vector<std::string> parts;
  for (llvm::StringRef line : lines) {
    line = line.trim();
    line.consume_front(program + ":");
    for (llvm::StringRef tail : {"Try:", "See:"}) {
      size_t at = line.find(tail);
      if (at != llvm::StringRef::npos)
        line = line.take_front(at);
    }
    line = line.trim().rtrim('!').rtrim('.').rtrim(':').trim();
    if (line.empty())
      continue;
    std::string part = line.str();
    if (part.size() > 1 && part[0] >= 'A' && part[0] <= 'Z' && part[1] >= 'a' && part[1] <= 'z')
      part[0] = llvm::toLower(part[0]);
    parts.push_back(part);
  }
  std::string command = args.size() > 1 && findCommand(args[1]) ? args[1] : "";
  return usageError(llvm::join(parts, "; ") + " ('kiln help" +
                    (command.empty() ? "" : " " + command) + "' lists the arguments)");
}

} // namespace kiln::cli
