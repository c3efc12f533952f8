#include "cli/commands.h"

#include <gtest/gtest.h>

#include <string>

namespace udon::cli {
namespace {

// Each name of the table sets up exactly the command of that name (a wrong name would set
// up another command for it, or none).
TEST(CommandsTest, EachNameSetsUpItsOwnCommandAlone) {
  for (std::string_view name : CommandNames()) {
    CLI::App app;
    RegisterCommands(app, name);
    const auto commands = app.get_subcommands({});
    ASSERT_EQ(commands.size(), 1u) << name;
    EXPECT_EQ(commands.front()->get_name(), std::string(name));
  }
}

TEST(CommandsTest, AnythingElseSetsUpEveryCommand) {
  for (const char* first : {"", "--help", "--version", "cal"}) {
    CLI::App app;
    RegisterCommands(app, first);
    EXPECT_EQ(app.get_subcommands({}).size(), CommandNames().size()) << first;
  }
}

}  // namespace
}  // namespace udon::cli
