#include "reference/reference.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/file.h"

namespace udon::reference {
namespace {

namespace fs = std::filesystem;

using Commands = std::vector<const CLI::App*>;
using Options = std::vector<const CLI::Option*>;

// What --help lists: commands and options with a group (hidden ones have none).
Commands VisibleCommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

Options NamedOptions(const CLI::App& app) {
  return app.get_options(
      [](const CLI::Option* option) { return option->nonpositional() && !option->get_group().empty(); });
}

Options Positionals(const CLI::App& app) {
  return app.get_options(
      [](const CLI::Option* option) { return !option->nonpositional() && option->get_positional(); });
}

bool TakesValue(const CLI::Option& option) { return option.get_items_expected_max() > 0; }

// The command names from the program down: {"evidence", "summarize"}.
std::vector<std::string> CommandWords(const CLI::App& command) {
  std::vector<std::string> words;
  for (const CLI::App* at = &command; at->get_parent() != nullptr; at = at->get_parent()) {
    words.push_back(at->get_name());
  }
  std::reverse(words.begin(), words.end());
  return words;
}

std::string Join(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const std::string& word : words) {
    if (!out.empty()) out += separator;
    out += word;
  }
  return out;
}

std::string Invocation(const CLI::App& command, std::string_view program) {
  std::vector<std::string> words = CommandWords(command);
  words.insert(words.begin(), std::string(program));
  return Join(words, " ");
}

std::string PageStem(const CLI::App& command, std::string_view program) {
  std::vector<std::string> words = CommandWords(command);
  words.insert(words.begin(), std::string(program));
  return Join(words, "-");
}

// Text as roff: backslashes and minus signs escaped (so `--json` stays two ASCII hyphens),
// a control character at a line's start neutralized.
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Bold(std::string_view text) { return "\\fB" + Roff(text) + "\\fR"; }
std::string Italic(std::string_view text) { return "\\fI" + Roff(text) + "\\fR"; }

// A command's description; the program's without the "PROGRAM: " its --help starts with.
std::string Description(const CLI::App& command, std::string_view program) {
  const std::string text = command.get_description();
  const std::string prefix = std::string(program) + ": ";
  return command.get_parent() == nullptr && text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// "-o, --output TEXT ..." in roff.
std::string OptionLabel(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_snames()) names.push_back(Bold("-" + name));
  for (const std::string& name : option.get_lnames()) names.push_back(Bold("--" + name));
  std::string label = Join(names, ", ");
  if (TakesValue(option)) {
    const std::string& text = option.get_option_text();
    label += " " + Italic(text.empty() ? option.get_type_name() : text);
    if (option.get_expected_max() > 1) label += " ...";
  }
  return label;
}

std::string OptionText(const CLI::Option& option) {
  std::string text = Roff(option.get_description());
  if (option.get_required()) text += " (required)";
  if (!option.get_default_str().empty()) text += " (default: " + Roff(option.get_default_str()) + ")";
  return text;
}

std::string Synopsis(const CLI::App& command, std::string_view program) {
  std::string out = ".SH SYNOPSIS\n" + Bold(Invocation(command, program)) + "\n[\\fIOPTIONS\\fR]";
  for (const CLI::Option* positional : Positionals(command)) {
    std::string name = Italic(positional->get_name(true)) + (positional->get_expected_max() > 1 ? "..." : "");
    out += positional->get_required() ? " " + name : " [" + name + "]";
  }
  if (!VisibleCommands(command).empty()) out += " \\fICOMMAND\\fR";
  return out + "\n";
}

std::string Arguments(const CLI::App& command) {
  std::string out;
  for (const CLI::Option* positional : Positionals(command)) {
    out += ".TP\n" + Italic(positional->get_name(true)) + "\n" + OptionText(*positional) + "\n";
  }
  return out.empty() ? out : ".SH ARGUMENTS\n" + out;
}

std::string OptionsSection(const CLI::App& command) {
  std::string out = ".SH OPTIONS\n";
  for (const CLI::Option* option : NamedOptions(command)) {
    out += ".TP\n" + OptionLabel(*option) + "\n" + OptionText(*option) + "\n";
  }
  return out;
}

std::string CommandsSection(const CLI::App& command) {
  std::string out;
  for (const CLI::App* sub : VisibleCommands(command)) {
    out += ".TP\n" + Bold(sub->get_name()) + "\n" + Roff(sub->get_description()) + "\n";
  }
  return out.empty() ? out : ".SH COMMANDS\n" + out;
}

std::string ExitStatusSection(const std::vector<ExitStatus>& statuses) {
  std::string out;
  for (const ExitStatus& status : statuses) {
    out += ".TP\n" + Bold(std::to_string(status.status)) + "\n" + Roff(status.meaning) + "\n";
  }
  return out.empty() ? out : ".SH EXIT STATUS\n" + out;
}

std::string SeeAlso(const CLI::App& command, std::string_view program, const std::string& further_reading) {
  std::vector<std::string> pages;
  if (command.get_parent() != nullptr) pages.push_back(Bold(program) + "(1)");
  for (const CLI::App* sub : VisibleCommands(command)) pages.push_back(Bold(PageStem(*sub, program)) + "(1)");
  std::vector<std::string> paragraphs;
  if (!pages.empty()) paragraphs.push_back(Join(pages, ",\n") + "\n");
  if (!further_reading.empty()) paragraphs.push_back(Roff(further_reading) + "\n");
  return paragraphs.empty() ? "" : ".SH SEE ALSO\n" + Join(paragraphs, ".PP\n");
}

ManPage RenderPage(const CLI::App& command, std::string_view program, std::string_view version,
                   const PageNotes& notes) {
  const std::string stem = PageStem(command, program);
  std::string title = stem;
  std::transform(title.begin(), title.end(), title.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string roff = ".\\\" Generated from " + std::string(program) + "'s command tree (" +
                     std::string(kWriteReferenceFlag) + "); do not edit.\n";
  roff += ".TH \"" + title + "\" \"1\" \"\" \"" + std::string(program) + " " + std::string(version) +
          "\" \"User Commands\"\n";
  const std::string description = Description(command, program);
  roff += ".SH NAME\n" + Roff(stem) + " \\- " + Roff(FirstLine(description)) + "\n";
  roff += Synopsis(command, program);
  roff += ".SH DESCRIPTION\n" + Roff(description) + "\n";
  // A footer is laid out by its author for --help (the demo server's table of faults): kept as it is.
  std::string footer = command.get_footer();
  while (!footer.empty() && footer.back() == '\n') footer.pop_back();
  if (!footer.empty()) roff += ".PP\n.nf\n" + Roff(footer) + "\n.fi\n";
  roff += Arguments(command) + OptionsSection(command) + CommandsSection(command);
  if (command.get_parent() == nullptr) roff += ExitStatusSection(notes.exit_statuses);
  roff += SeeAlso(command, program, notes.further_reading);
  return {stem + ".1", roff};
}

void RenderPages(const CLI::App& command, std::string_view program, std::string_view version,
                 const PageNotes& notes, std::vector<ManPage>& pages) {
  pages.push_back(RenderPage(command, program, version, notes));
  for (const CLI::App* sub : VisibleCommands(command)) RenderPages(*sub, program, version, notes, pages);
}

// The completion script's data for one command path.
struct CompletionNode {
  std::string path;  // "evidence summarize"; "" for the program
  std::vector<std::string> commands, options, valued;
  std::vector<std::pair<std::string, std::string>> choices;  // option name, "a b c"
};

// "TEXT:{text,json,dot}" (CLI::IsMember) -> "text json dot".
std::string Choices(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const std::size_t open = type.find(":{");
  if (open == std::string::npos || type.back() != '}') return "";
  std::string words = type.substr(open + 2, type.size() - open - 3);
  std::replace(words.begin(), words.end(), ',', ' ');
  return words;
}

void CollectNodes(const CLI::App& command, std::vector<CompletionNode>& nodes) {
  CompletionNode node{Join(CommandWords(command), " "), {}, {}, {}, {}};
  for (const CLI::App* sub : VisibleCommands(command)) node.commands.push_back(sub->get_name());
  for (const CLI::Option* option : NamedOptions(command)) {
    std::vector<std::string> names;
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    node.options.insert(node.options.end(), names.begin(), names.end());
    if (!TakesValue(*option)) continue;
    node.valued.insert(node.valued.end(), names.begin(), names.end());
    const std::string choices = Choices(*option);
    if (choices.empty()) continue;
    for (const std::string& name : names) node.choices.emplace_back(name, choices);
  }
  nodes.push_back(std::move(node));
  for (const CLI::App* sub : VisibleCommands(command)) CollectNodes(*sub, nodes);
}

std::string FunctionName(std::string_view program) {
  std::string name = "_" + std::string(program);
  std::replace_if(name.begin(), name.end(), [](unsigned char c) { return !std::isalnum(c); }, '_');
  return name;
}

std::string NodeFunctions(const std::vector<CompletionNode>& nodes, const std::string& function) {
  std::string node_case, choice_case;
  for (const CompletionNode& node : nodes) {
    node_case += "    \"" + node.path + "\")\n      cmds=\"" + Join(node.commands, " ") + "\"\n      opts=\"" +
                 Join(node.options, " ") + "\"\n      valued=\"" + Join(node.valued, " ") + "\" ;;\n";
    for (const auto& [option, words] : node.choices) {
      choice_case += "    \"" + node.path + "|" + option + "\") choices=\"" + words + "\" ;;\n";
    }
  }
  return function + "_node() {\n  case \"$1\" in\n" + node_case + "  esac\n}\n\n" + function +
         "_choices() {\n  choices=\"\"\n  case \"$1|$2\" in\n" + choice_case + "  esac\n}\n\n";
}

// The completion function: walks the words typed so far down the command tree (skipping
// option values), then offers choices or files after a valued option, options after "-",
// else subcommands, else files.
constexpr const char* kCompletionBody = R"bash(() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="" cmds="" opts="" valued="" choices="" word i
  ((COMP_CWORD > 0)) && prev="${COMP_WORDS[COMP_CWORD-1]}"
  FN_node ""
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    if [[ " ${valued} " == *" ${word} "* ]]; then
      i=$((i + 1))
    elif [[ " ${cmds} " == *" ${word} "* ]]; then
      path="${path:+${path} }${word}"
      FN_node "${path}"
    fi
  done
  COMPREPLY=()
  if [[ -n "${prev}" && " ${valued} " == *" ${prev} "* ]]; then
    FN_choices "${path}" "${prev}"
    if [[ -n "${choices}" ]]; then
      mapfile -t COMPREPLY < <(compgen -W "${choices}" -- "${cur}")
    else
      mapfile -t COMPREPLY < <(compgen -f -- "${cur}")
    fi
  elif [[ "${cur}" == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${opts}" -- "${cur}")
  elif [[ -n "${cmds}" ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${cmds}" -- "${cur}")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "${cur}")
  fi
}
)bash";

std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

Status WriteInto(const fs::path& dir, const std::string& file, const std::string& text) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return MakeError("io.write_failed", "cannot create the reference folder " + dir.string());
  return base::WriteFileAtomic((dir / file).string(), text);
}

}  // namespace

std::vector<ManPage> RenderManPages(const CLI::App& app, std::string_view program, std::string_view version,
                                    const PageNotes& notes) {
  std::vector<ManPage> pages;
  RenderPages(app, program, version, notes, pages);
  return pages;
}

std::string RenderBashCompletion(const CLI::App& app, std::string_view program) {
  std::vector<CompletionNode> nodes;
  CollectNodes(app, nodes);
  const std::string function = FunctionName(program);
  return "# bash completion for " + std::string(program) + ": generated from its command tree (" +
         std::string(kWriteReferenceFlag) + "); do not edit.\n\n" + NodeFunctions(nodes, function) + function +
         ReplaceAll(kCompletionBody, "FN_", function + "_") + "\ncomplete -o filenames -F " + function + " " +
         std::string(program) + "\n";
}

Status WriteReference(const CLI::App& app, std::string_view program, std::string_view version,
                      const std::string& dir, const PageNotes& notes) {
  for (const ManPage& page : RenderManPages(app, program, version, notes)) {
    UDON_RETURN_IF_ERROR(WriteInto(fs::path(dir) / "man1", page.file, page.roff));
  }
  return WriteInto(fs::path(dir) / "bash-completion", std::string(program), RenderBashCompletion(app, program));
}

std::optional<Status> MaybeWriteReference(const CLI::App& app, int argc, char** argv, const PageNotes& notes) {
  if (argc != 4 || argv[1] != kWriteReferenceFlag) return std::nullopt;
  return WriteReference(app, fs::path(argv[0]).filename().string(), argv[3], argv[2], notes);
}

}  // namespace udon::reference
