#include "quasistep/core/output_file.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "quasistep/core/json_node.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/version.hpp"

namespace qs::io {
namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string& path) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict, bug 105329) on '"' + s + '"'.
  std::string q = "\"";
  q += printable(path);
  q += '"';
  return q;
}

[[noreturn]] void refuse(const Output& o, const std::string& cause) {
  throw OutputError(o.option() + " " + quoted(o.path()) + ": " + cause);
}

// Temporary files that a signal handler must remove: fixed slots of plain characters, so
// that the handler touches nothing but unlink() (async-signal-safe).
constexpr int kTempSlots = 64;
constexpr std::size_t kTempPathMax = 4096;
std::array<std::atomic<bool>, kTempSlots> g_slot_used{};
std::array<std::array<char, kTempPathMax>, kTempSlots> g_slot_path{};

int register_temp(const std::string& path) {
  if (path.size() >= kTempPathMax) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    if (g_slot_used[i].load()) continue;
    std::memcpy(g_slot_path[i].data(), path.c_str(), path.size() + 1);
    g_slot_used[i].store(true);
    return i;
  }
  return -1;  // more live outputs than slots: removed by the destructor only
}

void unregister_temp(const std::string& path) {
  for (int i = 0; i < kTempSlots; ++i)
    if (g_slot_used[i].load() && path == g_slot_path[i].data()) g_slot_used[i].store(false);
}

extern "C" void remove_temps_and_die(int sig) {
  for (int i = 0; i < kTempSlots; ++i)
    if (g_slot_used[i].load()) unlink(g_slot_path[i].data());
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

/// A path to one of the process's open files (/dev/stdout leads there): its link names no
/// path to follow ("pipe:[123]"); the kernel resolves it when it is opened.
bool is_descriptor_path(const fs::path& p) {
  const std::string s = p.string();
  return s.rfind("/proc/", 0) == 0 || s.rfind("/dev/fd/", 0) == 0;
}

/// Follows a chain of symlinks to the path it ends at (which need not exist: a link may
/// point to a new file). Throws for a loop.
std::string follow_links(const Output& o) {
  fs::path p = o.path();
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (is_descriptor_path(p) || lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    const fs::path next = fs::read_symlink(p);
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  refuse(o, "too many levels of symbolic links");
}

/// The folder a new or regular file is written in, for the temporary file.
fs::path folder_of(const std::string& target) {
  const fs::path parent = fs::path(target).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

/// Where a path ends up, for comparing outputs that do not exist yet: its folder resolved.
std::string identity_of_new(const std::string& target) {
  std::error_code ec;
  const fs::path folder = fs::canonical(folder_of(target), ec);
  return (ec ? folder_of(target) : folder).string() + "/" + fs::path(target).filename().string();
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

}  // namespace

OutputSet::OutputSet(std::ostream& standard_output, std::vector<std::string> inputs)
    : standard_output_(standard_output), inputs_(std::move(inputs)) {}

OutputSet::~OutputSet() {
  if (committed_) return;
  for (auto& o : outputs_) {
    if (o->kind_ != OutputKind::file || o->temp_.empty()) continue;
    o->own_.reset();
    unlink(o->temp_.c_str());
    unregister_temp(o->temp_);
  }
}

Output* OutputSet::add(const std::string& option, const std::string& path) {
  if (path.empty()) return nullptr;
  auto o = std::make_unique<Output>();
  o->option_ = option;
  o->path_ = path;
  if (path == "-") {
    for (const auto& other : outputs_)
      if (other->kind_ == OutputKind::standard_output)
        refuse(*o, "only one output can be standard output (" + other->option_ + " is)");
    o->kind_ = OutputKind::standard_output;
    outputs_.push_back(std::move(o));
    return outputs_.back().get();
  }
  o->target_ = follow_links(*o);
  struct stat st;
  const bool exists = stat(o->target_.c_str(), &st) == 0;
  // ENOTDIR: a part of the folder is a file; the folder check below says which.
  if (!exists && errno != ENOENT && errno != ENOTDIR) refuse(*o, std::strerror(errno));
  if (exists) {
    if (S_ISDIR(st.st_mode)) refuse(*o, "is a directory");
    if (S_ISBLK(st.st_mode)) refuse(*o, "is a block device (refused: it would be overwritten)");
    // An open descriptor (/dev/stdout redirected to a file) is written through as well: a
    // rename would swap the file under the descriptor.
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || is_descriptor_path(o->target_))
      o->kind_ = OutputKind::stream;
    if (access(o->target_.c_str(), W_OK) != 0) refuse(*o, std::string("not writable: ") + std::strerror(errno));
    for (const std::string& in : inputs_) {
      struct stat ist;
      if (stat(in.c_str(), &ist) == 0 && same_file(st, ist))
        refuse(*o, "is the input file " + quoted(in) + " (it would be overwritten)");
    }
    for (const auto& other : outputs_) {
      struct stat ost;
      // A character device such as /dev/null may take several outputs; a file or a pipe not.
      if (other->kind_ != OutputKind::standard_output && stat(other->target_.c_str(), &ost) == 0 &&
          same_file(st, ost) && !S_ISCHR(st.st_mode))
        refuse(*o, "names the same file as " + other->option_);
    }
    if (o->kind_ == OutputKind::file) {
      o->existed_ = true;
      o->existing_mode_ = st.st_mode & 07777;
    }
  } else {
    for (const auto& other : outputs_)
      if (other->kind_ == OutputKind::file && !other->existed_ && identity_of_new(other->target_) == identity_of_new(o->target_))
        refuse(*o, "names the same file as " + other->option_);
  }
  if (o->kind_ == OutputKind::file) {
    const fs::path folder = folder_of(o->target_);
    struct stat fst;
    if (stat(folder.c_str(), &fst) != 0) refuse(*o, "folder " + quoted(folder.string()) + " does not exist");
    if (!S_ISDIR(fst.st_mode)) refuse(*o, quoted(folder.string()) + " is not a folder");
    if (access(folder.c_str(), W_OK | X_OK) != 0) refuse(*o, "folder " + quoted(folder.string()) + " is not writable");
  }
  outputs_.push_back(std::move(o));
  return outputs_.back().get();
}

void OutputSet::open() {
  for (auto& o : outputs_) {
    if (o->stream_) continue;
    switch (o->kind_) {
      case OutputKind::standard_output:
        o->stream_ = &standard_output_;
        break;
      case OutputKind::stream: {
        // Opened without truncation or creation: a device or pipe is written, never replaced.
        auto f = std::make_unique<std::ofstream>(o->target_, std::ios::binary | std::ios::out | std::ios::app);
        if (!*f) refuse(*o, std::string("cannot open for writing: ") + std::strerror(errno));
        o->own_ = std::move(f);
        o->stream_ = o->own_.get();
        break;
      }
      case OutputKind::file: {
        // A unique name beside the target (same file system, so the rename is atomic); a
        // user's own "NAME.partial" is never touched.
        std::string name = o->target_ + ".XXXXXX.partial";
        const int fd = mkstemps(name.data(), static_cast<int>(std::strlen(".partial")));
        if (fd < 0) refuse(*o, std::string("cannot create a file in its folder: ") + std::strerror(errno));
        close(fd);
        o->temp_ = name;
        register_temp(name);
        auto f = std::make_unique<std::ofstream>(name, std::ios::binary | std::ios::trunc);
        if (!*f) refuse(*o, std::string("cannot write: ") + std::strerror(errno));
        o->own_ = std::move(f);
        o->stream_ = o->own_.get();
        break;
      }
    }
    o->stream_->precision(17);  // round-trip doubles
  }
}

bool OutputSet::uses_standard_output() const {
  for (const auto& o : outputs_)
    if (o->kind_ == OutputKind::standard_output) return true;
  return false;
}

void OutputSet::commit() {
  // Everything written and closed first: a failure here leaves no output in place.
  for (auto& o : outputs_) {
    if (!o->stream_) continue;
    o->stream_->flush();
    bool ok = static_cast<bool>(*o->stream_);
    if (auto* f = dynamic_cast<std::ofstream*>(o->own_.get())) {
      f->close();
      ok = ok && static_cast<bool>(*f);
    }
    if (!ok) refuse(*o, "error while writing (disk full, or the reader went away?)");
  }
  mode_t umask_now = umask(0);
  umask(umask_now);
  std::vector<Output*> placed;
  for (auto& o : outputs_) {
    if (o->kind_ != OutputKind::file || o->temp_.empty()) continue;
    // A replaced file keeps its permissions; a new one gets the usual 0666 & ~umask
    // (mkstemps made the temporary file 0600).
    chmod(o->temp_.c_str(), o->existed_ ? o->existing_mode_ : (0666 & ~umask_now));
    if (std::rename(o->temp_.c_str(), o->target_.c_str()) != 0) {
      const std::string cause = std::strerror(errno);
      // Undo what this set created; a file that was replaced cannot be brought back.
      for (Output* p : placed)
        if (!p->existed_) unlink(p->target_.c_str());
      refuse(*o, "cannot move the output into place: " + cause);
    }
    unregister_temp(o->temp_);
    o->temp_.clear();
    placed.push_back(o.get());
  }
  committed_ = true;
}

void install_interrupt_cleanup() {
  // Every signal whose default action ends the process and that a user or the system sends
  // to a long run: SIGPIPE too (`quasistep mc --out - --report r.html | head` dies of it, as
  // a filter should, without leaving r.html's temporary file), SIGXCPU and SIGXFSZ (ulimit),
  // SIGALRM and the user signals (job schedulers). A signal the process was started with
  // ignored stays ignored: under `nohup` a hang-up must not stop the run.
  for (int sig : kInterruptSignals) {
    struct sigaction now {};
    if (sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;
    std::signal(sig, remove_temps_and_die);
  }
}

std::string provenance_line(const std::string& scene_source, const std::string& scene_hash, const std::string& seed,
                            const std::string& world, const std::string& model) {
  return std::string("# quasistep ") + kVersion + " scene=" + printable(scene_source) + " scene_hash=" + scene_hash +
         " seed=" + seed + " world=" + world + " model=" + model;
}

std::string provenance_line(const Scene& scene, const std::string& seed) {
  const Model& m = *scene.model;
  return provenance_line(scene.source, scene.hash, seed, std::string(to_string(m.world.type)),
                         std::string(to_string(m.formulation)));
}

std::string printable(const std::string& text) {
  return json_input::escape_text(text, false);  // the readers' escaping, quotes left as they are
}

}  // namespace qs::io
