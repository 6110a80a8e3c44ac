// loader.cc: plugin discovery, loading, ABI negotiation, dependency order and registration.
#include "core/host/loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <boost/dll/shared_library.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "core/device/device_context.h"
#include "core/host/host_api.h"
#include "core/platform/enforce.h"
#include "core/platform/flags.h"
#include "core/platform/status.h"
#include "core/plugin/registrar.h"
#include "core/registry/registry.h"

namespace fs = std::filesystem;

namespace tide::core {
namespace {

// Every library ever opened stays open: plugins' callbacks live in them.
std::vector<std::unique_ptr<boost::dll::shared_library>>& OpenLibraries() {
  static auto* libs = new std::vector<std::unique_ptr<boost::dll::shared_library>>;
  return *libs;
}

// When each file now in the process was opened (canonical path -> its modification time then):
// dlopen of the same path hands back the image already mapped, so a file rebuilt since is not
// what would run.
std::map<std::string, fs::file_time_type>& OpenedFileTimes() {
  static auto* times = new std::map<std::string, fs::file_time_type>;
  return *times;
}

bool IsPluginFile(const fs::path& p) {
  std::string n = p.filename().string();
  return n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0;
}

// Empty for a regular file (after following links) or one that does not exist (opening it says
// why); else what it is. Opening a FIFO to read its ELF header would block until a writer comes
// (`import tide` hung on one named *.so on the plugin path); a device could be anything.
std::string NotARegularFile(const std::string& path) {
  std::error_code ec;
  switch (fs::status(path, ec).type()) {
    case fs::file_type::regular:
    case fs::file_type::not_found:
      return "";
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::character:
      return "a character device";
    default:
      return ec ? "a file whose type cannot be read: " + ec.message() : "not a regular file";
  }
}

// Candidate files in path order; directories are scanned (sorted) for *.so. Entries that cannot
// be plugins (missing, not regular files) get a failed record in `failed` instead.
std::vector<std::string> Candidates(const std::vector<std::string>& entries,
                                    std::vector<PluginRecord>* failed) {
  std::vector<std::string> files;
  auto fail = [failed](const std::string& path, std::string why) {
    PluginRecord r;
    r.path = path;
    r.error = std::move(why);
    failed->push_back(std::move(r));
  };
  for (const auto& e : entries) {
    std::error_code ec;
    if (fs::is_directory(e, ec)) {
      std::vector<std::string> dir;
      for (const auto& f : fs::directory_iterator(e, ec)) {
        if (!IsPluginFile(f.path()) || fs::is_directory(f.path(), ec)) continue;
        const std::string odd = NotARegularFile(f.path().string());
        if (odd.empty())
          dir.push_back(f.path().string());
        else
          fail(f.path().string(), "not a regular file: it is " + odd);
      }
      std::sort(dir.begin(), dir.end());
      files.insert(files.end(), dir.begin(), dir.end());
    } else if (fs::exists(e, ec)) {
      const std::string odd = NotARegularFile(e);
      if (odd.empty())
        files.push_back(e);
      else
        fail(e, "not a regular file: it is " + odd);
    } else {
      fail(e, "no such file or directory");
    }
  }
  return files;
}

// A loaded-but-not-registered plugin.
struct Candidate {
  PluginRecord record;
  boost::dll::shared_library* lib = nullptr;
  TidePluginRegisterFn register_fn = nullptr;
};

// The loaded plugins' tide_plugin_finalize, in load order; run once at exit, last loaded first.
// Registered with atexit when the first is added: after the device shutdown that a device
// context registers later, so devices are finalized before the plugins that provide them.
std::mutex g_finalize_mu;
std::atomic<bool> g_plugins_shut_down{false};  // tide.shutdown() or exit ran the finalizers
std::vector<TidePluginFinalizeFn>& Finalizers() {
  static auto* f = new std::vector<TidePluginFinalizeFn>;
  return *f;
}
void RunPluginFinalizers() {
  std::vector<TidePluginFinalizeFn> run;
  {
    std::lock_guard<std::mutex> lock(g_finalize_mu);
    g_plugins_shut_down = true;
    run.swap(Finalizers());
  }
  ShutdownDevices();  // a no-op when the devices were shut down already
  for (auto it = run.rbegin(); it != run.rend(); ++it) {
    try {
      (*it)();
    } catch (...) {  // nobody to report to at exit
    }
  }
}
void AddFinalizer(boost::dll::shared_library* lib) {
  if (!lib || !lib->has(TIDE_PLUGIN_FINALIZE_SYMBOL)) return;
  std::lock_guard<std::mutex> lock(g_finalize_mu);
  static bool at_exit = (std::atexit(RunPluginFinalizers), true);
  (void)at_exit;
  if (g_plugins_shut_down) return;  // loaded after tide.shutdown(): nothing will finalize again
  Finalizers().push_back(lib->get<void()>(TIDE_PLUGIN_FINALIZE_SYMBOL));
}

#if defined(__x86_64__)
constexpr uint16_t kNativeMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kNativeMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr uint16_t kNativeMachine = EM_PPC64;
#elif defined(__s390x__)
constexpr uint16_t kNativeMachine = EM_S390;
#elif defined(__riscv)
constexpr uint16_t kNativeMachine = EM_RISCV;
#else
#error "CheckElfFile: add this machine's ELF e_machine"
#endif

std::string MachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86-64";
    case EM_AARCH64:
      return "AArch64 (arm64)";
    case EM_386:
      return "x86 (32-bit)";
    case EM_ARM:
      return "ARM (32-bit)";
    case EM_PPC64:
      return "PowerPC 64";
    case EM_S390:
      return "IBM Z (s390x)";
    case EM_RISCV:
      return "RISC-V";
    default:
      return StrCat("ELF machine ", machine);
  }
}

// The dynamic loader maps a shared object's segments as its program headers describe them: a
// truncated file maps pages past its end, and the first touch of one is a SIGBUS. So the headers
// are checked against the file's size first. Empty when the file looks whole (or is not a native
// ELF file, which dlopen refuses by itself before mapping anything); else what is wrong.
std::string CheckElfFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return StrCat("cannot open: ", std::strerror(errno));
  f.seekg(0, std::ios::end);
  const uint64_t size = static_cast<uint64_t>(f.tellg());
  f.seekg(0);
  Elf64_Ehdr eh;
  if (size < sizeof(eh))
    return StrCat("not a shared object (", size, " bytes, shorter than an ELF header)");
  f.read(reinterpret_cast<char*>(&eh), sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return "";  // dlopen says "invalid ELF header"
  const unsigned char native_data =
      __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  // e_machine sits at the same offset in 32- and 64-bit headers, in the file's byte order. For
  // another machine's file glibc's dlopen says only "No such file or directory".
  const uint16_t machine =
      eh.e_ident[EI_DATA] == native_data ? eh.e_machine : __builtin_bswap16(eh.e_machine);
  if (machine != kNativeMachine)
    return StrCat("built for another machine: the file is for ", MachineName(machine),
                  ", this Tide runs on ", MachineName(kNativeMachine),
                  " (use the plugin's build for this machine)");
  if (sizeof(void*) != 8 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != native_data)
    return "";  // another class or byte order: dlopen refuses it from the header alone
  auto truncated = [&](const char* what, uint64_t end) {
    return StrCat("truncated or corrupt shared object: its ", what, " end at byte ", end,
                  " but the file has ", size, " bytes");
  };
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0)
    return "corrupt shared object: bad program header table";
  const uint64_t ph_end = eh.e_phoff + uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr);
  if (eh.e_phoff > size || ph_end > size) return truncated("program headers", ph_end);
  if (eh.e_shnum && eh.e_shoff) {
    const uint64_t sh_end = eh.e_shoff + uint64_t(eh.e_shnum) * eh.e_shentsize;
    if (eh.e_shoff > size || sh_end > size || sh_end < eh.e_shoff)
      return truncated("section headers", sh_end);
  }
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  f.seekg(static_cast<std::streamoff>(eh.e_phoff));
  f.read(reinterpret_cast<char*>(ph.data()),
         static_cast<std::streamsize>(ph.size() * sizeof(Elf64_Phdr)));
  if (!f) return truncated("program headers", ph_end);
  for (const Elf64_Phdr& p : ph) {
    if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC) continue;
    const uint64_t end = p.p_offset + p.p_filesz;
    if (end < p.p_offset || end > size)
      return truncated(p.p_type == PT_LOAD ? "loadable segments" : "dynamic section", end);
  }
  return "";
}

std::string DlopenReason(const std::string& path) {
  dlerror();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h) {
    dlclose(h);
    return "the dynamic loader refused it";
  }
  const char* e = dlerror();
  std::string msg = e ? e : "unknown dynamic-loader error";
  if (msg.find("invalid ELF header") != std::string::npos ||
      msg.find("file too short") != std::string::npos)
    return "not a shared object (" + msg + ")";
  return msg;
}

// Until 1.0 is released the tables' layout is checked exactly (TIDE_ABI_LAYOUT): a plugin built
// against another layout would call the wrong host entries. Empty when the layouts match.
std::string LayoutMismatch(boost::dll::shared_library& lib, const std::string& path) {
  std::string theirs = "1 (it exports no layout revision: built before revisions existed)";
  if (lib.has(TIDE_PLUGIN_ABI_LAYOUT_SYMBOL)) {
    const uint32_t layout = lib.get<uint32_t()>(TIDE_PLUGIN_ABI_LAYOUT_SYMBOL)();
    if (layout == TIDE_ABI_LAYOUT) return "";
    theirs = StrCat(layout);
  }
  return StrCat("plugin file ", path, " was built against ABI layout ", theirs, ", this core has ",
                TIDE_ABI_LAYOUT, " (the tables of the unreleased ABI ", TIDE_ABI_MAJOR, ".",
                TIDE_ABI_MINOR, " were reordered); rebuild the plugin against this SDK");
}

// Opens the file and reads its info; fills record.error on failure.
void Open(const std::string& path, Candidate* c) {
  PluginRecord& r = c->record;
  r.path = path;
  r.error = CheckElfFile(path);
  if (!r.error.empty()) return;
  auto lib = std::make_unique<boost::dll::shared_library>();
  boost::dll::fs::error_code ec;
  lib->load(path, ec, boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now);
  if (ec || !lib->is_loaded()) {
    r.error = DlopenReason(path);
    return;
  }
  std::error_code time_ec;
  const auto mtime = fs::last_write_time(path, time_ec);
  if (!time_ec) OpenedFileTimes().emplace(fs::weakly_canonical(path).string(), mtime);
  for (const char* sym : {TIDE_PLUGIN_INFO_SYMBOL, TIDE_PLUGIN_REGISTER_SYMBOL}) {
    if (!lib->has(sym)) {
      r.error = StrCat("missing entry symbol '", sym,
                       "' (not a Tide plugin, or not built with TIDE_PLUGIN(...))");
      OpenLibraries().push_back(std::move(lib));
      return;
    }
  }
  r.error = LayoutMismatch(*lib, path);
  if (!r.error.empty()) {  // its tables are not this core's: call nothing else of it
    OpenLibraries().push_back(std::move(lib));
    return;
  }
  auto info_fn = lib->get<const TidePluginInfo*(const TideAbiRange*)>(TIDE_PLUGIN_INFO_SYMBOL);
  c->register_fn =
      lib->get<TideStatus*(const TideHostApi*, TideRegistrar*)>(TIDE_PLUGIN_REGISTER_SYMBOL);
  c->lib = lib.get();
  OpenLibraries().push_back(std::move(lib));

  TideAbiRange host{TIDE_STRUCT_SIZE(TideAbiRange, max_minor), TIDE_ABI_MAJOR, 0, TIDE_ABI_MINOR};
  const TidePluginInfo* info = nullptr;
  try {
    info = info_fn(&host);
  } catch (const std::exception& e) {
    r.error = StrCat("tide_plugin_info threw a C++ exception: ", e.what());
    return;
  } catch (...) {
    r.error = "tide_plugin_info threw an unknown C++ exception";
    return;
  }
  if (!info || info->struct_size < TIDE_STRUCT_SIZE(TidePluginInfo, requires)) {
    r.error = "tide_plugin_info returned no info, or one too small to read";
    return;
  }
  r.name = info->name ? info->name : "";
  r.version = info->version ? info->version : "";
  if (TIDE_HAS_FIELD(info, TidePluginInfo, description) && info->description)
    r.description = info->description;
  r.abi_major = info->abi_major;
  r.abi_minor = info->abi_minor;
  if (info->requires)
    for (const char* const* q = info->requires; *q; ++q) r.requires.emplace_back(*q);
  if (r.name.empty()) {
    r.error = "the plugin has no name";
  } else if (r.abi_major != TIDE_ABI_MAJOR) {
    r.error = StrCat("plugin '", r.name, "' (", path, ") speaks plugin ABI ", r.abi_major, ".",
                     r.abi_minor, ", this Tide speaks ", TIDE_ABI_MAJOR, ".", TIDE_ABI_MINOR,
                     " (a different major version: rebuild the plugin against this SDK)");
  } else if (TIDE_HAS_FIELD(info, TidePluginInfo, min_abi_minor) &&
             info->min_abi_minor > TIDE_ABI_MINOR) {
    r.error = StrCat("plugin '", r.name, "' (", path, ") needs plugin ABI ", r.abi_major, ".",
                     info->min_abi_minor, " or newer; this Tide speaks ", TIDE_ABI_MAJOR, ".",
                     TIDE_ABI_MINOR, " (upgrade Tide, or rebuild the plugin against this SDK)");
  } else if (r.abi_minor > TIDE_ABI_MINOR) {
    r.error = StrCat("plugin '", r.name, "' (", path, ") speaks plugin ABI ", r.abi_major, ".",
                     r.abi_minor, ", newer than this Tide's ", TIDE_ABI_MAJOR, ".", TIDE_ABI_MINOR,
                     " (upgrade Tide, or rebuild the plugin against this SDK)");
  }
}

// Whether `path` is one of Tide's own plugins (the install's plugin directory).
bool InTidesOwnDirectory(const std::string& path) {
  std::error_code ec1, ec2;
  const fs::path dir = fs::weakly_canonical(fs::path(path).parent_path(), ec1);
  return !ec1 && dir == fs::weakly_canonical(DefaultPluginDir(), ec2) && !ec2;
}

// Registers a candidate whose requirements are loaded; fills record.error on failure.
// Undotted op types are Fluid's names, kept for Tide's own packs (which live in the default
// plugin directory); a plugin elsewhere names its ops "vendor.op", so a later Tide op of the same
// name can never collide with it. A warning, not an error: the rule guards against mistakes.
std::vector<std::string> VendorPrefixWarnings(const PluginRecord& r) {
  std::vector<std::string> warnings;
  if (InTidesOwnDirectory(r.path)) return warnings;
  for (const auto& op : r.ops)
    if (op.find('.') == std::string::npos)
      warnings.push_back(StrCat("op '", op,
                                "' has no vendor prefix: names without a '.' are Fluid's, kept ",
                                "for Tide's own op packs; name it '<vendor>.", op, "' (plugin '",
                                r.name, "', ", r.path, ")"));
  return warnings;
}

void Register(Candidate* c) {
  PluginRecord& r = c->record;
  TideRegistrar reg;
  reg.plugin = r.name;
  reg.plugin_file = r.path;
  // Whatever the registry does not take (all of it on failure) is kept: it points into the
  // plugin's memory, and the plugin stays loaded.
  struct RetainLeftover {
    TideRegistrar& reg;
    ~RetainLeftover() { Registry::Global().Retain(std::move(reg.staged)); }
  } retain{reg};
  TideStatus* status = nullptr;
  try {
    status = c->register_fn(GetHostApi(), &reg);
  } catch (const std::exception& e) {
    r.error = StrCat("a C++ exception escaped tide_plugin_register: ", e.what());
    return;
  } catch (...) {
    r.error = "an unknown C++ exception escaped tide_plugin_register";
    return;
  }
  if (status) {
    r.error = StrCat("registration failed: ", status->message);
    delete status;
    return;
  }
  try {
    CommitSummary s = Registry::Global().Commit(std::move(reg.staged));
    r.ops = std::move(s.ops);
    r.kernels = std::move(s.kernels);
    r.devices = std::move(s.devices);
    r.transforms = std::move(s.transforms);
    r.warnings = VendorPrefixWarnings(r);
    r.warnings.insert(r.warnings.end(), s.warnings.begin(), s.warnings.end());
    r.loaded = true;
    AddFinalizer(c->lib);
  } catch (const Error& e) {
    r.error = e.what();
  }
}

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
size_t Utf8Length(const std::string& s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  return n;
}

// A JSON string; bytes that are not UTF-8 (e.g. in a path) become U+FFFD so the JSON stays valid.
std::string JsonEscape(const std::string& raw) {
  std::string s;
  for (size_t i = 0; i < raw.size();) {
    size_t n = Utf8Length(raw, i);
    if (n == 0) {
      s += "\xEF\xBF\xBD";
      ++i;
    } else {
      s.append(raw, i, n);
      i += n;
    }
  }
  std::string out;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return "\"" + out + "\"";
}

std::string JsonList(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + JsonEscape(v[i]);
  return s + "]";
}

}  // namespace

std::vector<std::string> SplitPluginPath(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(':', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool PluginPathOnly() {
  const char* v = std::getenv("TIDE_PLUGIN_PATH_ONLY");
  if (!v || !*v) return false;
  std::string s(v);
  return !(s == "0" || s == "false" || s == "False" || s == "FALSE" || s == "no" || s == "off");
}

void ShutdownPlugins() { RunPluginFinalizers(); }

std::string DefaultPluginDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&DefaultPluginDir), &info) && info.dli_fname)
    return (fs::path(info.dli_fname).parent_path() / "tide" / "plugins")
        .lexically_normal()
        .string();
  return "";
}

PluginManager& PluginManager::Global() {
  static auto* m = new PluginManager;  // never destroyed: plugins are never unloaded
  return *m;
}

std::vector<std::string> PluginManager::SearchPath() const {
  if (!FLAGS_plugin_path.empty())
    return SplitPluginPath(FLAGS_plugin_path);  // explicit: only these
  std::vector<std::string> path;
  if (const char* env = std::getenv("TIDE_PLUGIN_PATH")) path = SplitPluginPath(env);
  // $TIDE_PLUGIN_PATH adds to the defaults (a vendor directory must not drop Tide's own plugins);
  // TIDE_PLUGIN_PATH_ONLY=1 makes it the whole path (empty: none).
  if (PluginPathOnly()) return path;
  std::string dir = DefaultPluginDir();
  // Named already (ctest's TIDE_PLUGIN_PATH is the build's plugin directory): listed once.
  if (!dir.empty() && std::find(path.begin(), path.end(), dir) == path.end()) path.push_back(dir);
  return path;
}

void PluginManager::EnsureDiscovered() {
  InitOnce();
  std::lock_guard<std::mutex> lock(mu_);  // held throughout: every caller waits for discovery
  if (discovered_) return;
  discovered_ = true;
  // The search is made once: a plugin_path set later would change nothing, silently.
  MarkFlagConsumed("plugin_path", "plugin discovery when the core started",
                   "set FLAGS_plugin_path in the environment before the core starts, or load more "
                   "plugins now with tide.load_plugin(path) / PluginManager::Load");
  LoadAllLocked(SearchPath());
}

void PluginManager::LoadAll(const std::vector<std::string>& entries) {
  InitOnce();
  std::lock_guard<std::mutex> lock(mu_);
  LoadAllLocked(entries);
}

void PluginManager::LoadAllLocked(const std::vector<std::string>& entries) {
  std::vector<PluginRecord> failed;
  std::vector<std::string> files = Candidates(entries, &failed);
  std::set<std::string> known_paths;
  for (const auto& r : records_) known_paths.insert(fs::weakly_canonical(r.path).string());

  std::vector<Candidate> batch;
  for (const auto& f : files) {
    if (!known_paths.insert(fs::weakly_canonical(f).string()).second) continue;  // seen already
    Candidate c;
    auto t0 = std::chrono::steady_clock::now();
    Open(f, &c);
    c.record.load_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    batch.push_back(std::move(c));
  }
  // Register in dependency order: repeatedly take those whose requirements are all loaded. A
  // name is taken by the plugin that registers first (not one that fails).
  std::map<std::string, std::string> loaded;  // name -> file
  for (const auto& r : records_)
    if (r.loaded) loaded[r.name] = r.path;
  std::vector<Candidate*> pending;
  for (auto& c : batch)
    if (c.record.error.empty()) pending.push_back(&c);
  // Tide's own plugins register first: a vendor's op or plugin name that clashes with one of
  // them fails the vendor's plugin, never Tide's op packs (whose loss would take every model's
  // ops with it). Otherwise the path's order.
  std::stable_partition(pending.begin(), pending.end(),
                        [](const Candidate* c) { return InTidesOwnDirectory(c->record.path); });
  bool progress = true;
  while (!pending.empty() && progress) {
    progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      Candidate* c = *it;
      bool ready = std::all_of(c->record.requires.begin(), c->record.requires.end(),
                               [&](const std::string& q) { return loaded.count(q) > 0; });
      if (!ready) {
        ++it;
        continue;
      }
      auto taken = loaded.find(c->record.name);
      if (taken != loaded.end()) {
        c->record.error =
            StrCat("a plugin named '", c->record.name, "' is already loaded from ", taken->second);
      } else {
        auto t0 = std::chrono::steady_clock::now();
        Register(c);
        c->record.load_ms +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        if (c->record.loaded) loaded[c->record.name] = c->record.path;
      }
      it = pending.erase(it);
      progress = true;
    }
  }
  for (Candidate* c : pending) {  // requirements never met
    std::vector<std::string> absent;
    for (const auto& q : c->record.requires)
      if (!loaded.count(q)) absent.push_back(q);
    std::string list;
    for (const auto& a : absent) list += (list.empty() ? "'" : ", '") + a + "'";
    c->record.error = StrCat("requires plugin(s) ", list,
                             ", which did not load (missing, failed, or a dependency cycle)");
  }
  for (auto& r : failed) {
    LOG(WARNING) << "plugin " << r.path << " did not load: " << r.error;
    records_.push_back(std::move(r));
  }
  for (auto& c : batch) {
    if (!c.record.loaded)
      LOG(WARNING) << "plugin " << c.record.path << " did not load: " << c.record.error;
    records_.push_back(std::move(c.record));
  }
}

PluginRecord PluginManager::Load(const std::string& path) {
  std::string canonical = fs::weakly_canonical(path).string();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& r : records_)
      if (fs::weakly_canonical(r.path).string() == canonical && r.loaded) return r;  // already in
  }
  size_t before;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A file that failed before may be retried (a plugin it requires may load now); one that
    // changed on disk since it was opened cannot be: dlopen would hand back the old image.
    auto opened = OpenedFileTimes().find(canonical);
    std::error_code ec;
    if (opened != OpenedFileTimes().end() && fs::last_write_time(path, ec) != opened->second &&
        !ec) {
      std::string before;
      for (const auto& r : records_)
        if (fs::weakly_canonical(r.path).string() == canonical) before = r.error;
      TIDE_FAIL(TIDE_FAILED_PRECONDITION, "cannot load plugin ", path,
                ": this process opened the file before",
                before.empty() ? "" : " (it failed: ", before, before.empty() ? "" : ")",
                " and it has changed on disk since; a shared object cannot be replaced in a "
                "running process, so start a new one (restart Python) to load the new file");
    }
    records_.erase(std::remove_if(records_.begin(), records_.end(),
                                  [&](const PluginRecord& r) {
                                    return !r.loaded &&
                                           fs::weakly_canonical(r.path).string() == canonical;
                                  }),
                   records_.end());
    before = records_.size();
  }
  LoadAll({path});
  std::lock_guard<std::mutex> lock(mu_);
  if (records_.size() == before) {
    std::error_code ec;
    TIDE_FAIL(TIDE_NOT_FOUND, "cannot load plugin ", path, ": ",
              fs::is_directory(path, ec)
                  ? "the directory holds no plugin file (*.so) not loaded already"
                  : "it was already seen and is not loaded");
  }
  const PluginRecord& r = records_.back();
  if (!r.loaded) TIDE_FAIL(TIDE_FAILED_PRECONDITION, "cannot load plugin ", path, ": ", r.error);
  return r;
}

std::vector<PluginRecord> PluginManager::Records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

std::string PluginManager::RecordsJson() const {
  std::vector<PluginRecord> records = Records();
  std::string s = "{\n  \"abi\": \"" + std::to_string(TIDE_ABI_MAJOR) + "." +
                  std::to_string(TIDE_ABI_MINOR) +
                  "\",\n  \"search_path\": " + JsonList(SearchPath()) + ",\n  \"plugins\": [";
  for (size_t i = 0; i < records.size(); ++i) {
    const PluginRecord& r = records[i];
    s += i ? ",\n" : "\n";
    s += "    {\"name\": " + JsonEscape(r.name) + ", \"version\": " + JsonEscape(r.version) +
         ", \"file\": " + JsonEscape(r.path) + ", \"abi\": " +
         JsonEscape(r.abi_major ? std::to_string(r.abi_major) + "." + std::to_string(r.abi_minor)
                                : "") +
         ", \"status\": " + JsonEscape(r.loaded ? "loaded" : "failed") +
         ", \"error\": " + JsonEscape(r.error) + ", \"description\": " + JsonEscape(r.description) +
         ", \"requires\": " + JsonList(r.requires) + ", \"load_ms\": " + std::to_string(r.load_ms) +
         ",\n     \"ops\": " + JsonList(r.ops) + ",\n     \"kernels\": " + JsonList(r.kernels) +
         ",\n     \"devices\": " + JsonList(r.devices) +
         ", \"transforms\": " + JsonList(r.transforms) + ", \"warnings\": " + JsonList(r.warnings) +
         "}";
  }
  return s + (records.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace tide::core
