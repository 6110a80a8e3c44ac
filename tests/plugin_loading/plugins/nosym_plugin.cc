// nosym_plugin.cc: a valid shared object that exports nothing (hidden visibility): not a plugin.
namespace {
int Answer() { return 42; }
}  // namespace

int tide_test_hidden_helper() { return Answer(); }
