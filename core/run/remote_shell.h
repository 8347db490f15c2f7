#pragma once
// Running commands on the machine that holds a run: this one (/bin/sh -c) or an SSH host. Every
// remote command is one string a POSIX shell parses, so every argument that goes into it passes
// through shellQuote(): a run name with spaces, quotes, $(...) or ; stays one word and runs
// nothing. ssh always runs in batch mode (keys or an agent, never a password prompt) with host
// keys checked as ssh checks them (StrictHostKeyChecking=yes: an unknown or changed key is
// refused, never accepted silently). Torch-free and Qt-free.
#include <string>
#include <vector>

namespace foveal::core {

/// `s` as one word of a POSIX shell: single-quoted, each ' written as '\''.
std::string shellQuote(const std::string& s);
/// The words quoted and joined by spaces.
std::string shellJoin(const std::vector<std::string>& words);

/// What a finished child process left.
struct ProcessResult {
  int exitCode = -1;      ///< the exit status; -1 when it did not exit normally
  int signal = 0;         ///< the signal that ended it, 0 otherwise
  bool timedOut = false;  ///< killed because it ran past the time limit
  std::string out;        ///< everything it wrote to stdout (binary-safe)
  std::string err;        ///< everything it wrote to stderr
  bool ok() const { return exitCode == 0; }
};

/// Runs argv[0] (looked up in PATH) with `input` on its stdin; waits at most `timeoutSeconds`
/// (then SIGKILL). Throws Error when the program cannot be started.
ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& input = {},
                         double timeoutSeconds = 120);

/// An SSH destination: [user@]host[:port], and an optional ssh_config file (ssh -F) for the
/// identity and known-hosts files of a lab's setup (or a test's).
struct SshHost {
  std::string user;
  std::string host;
  int port = 0;            ///< 0: ssh's default (or the config's)
  std::string configFile;  ///< empty: ssh's own ~/.ssh/config
  /// A private key (ssh -i, and only it: IdentitiesOnly); empty: the agent's or the config's.
  std::string identityFile;

  /// Parses [user@]host[:port]. Throws Error naming the text and the problem: an empty host, a
  /// bad port, or a character that ssh could read as an option or a shell could interpret.
  static SshHost parse(const std::string& text);
  std::string toString() const;  ///< [user@]host[:port]
  bool empty() const { return host.empty(); }
};

/// Where commands run: locally through /bin/sh, or on an SSH host through its login shell.
class RemoteShell {
 public:
  RemoteShell() = default;  ///< this machine
  explicit RemoteShell(SshHost host) : m_host(std::move(host)) {}

  bool local() const { return m_host.empty(); }
  const SshHost& host() const { return m_host; }
  /// The argv that runs `command` (one shell command line).
  std::vector<std::string> argv(const std::string& command) const;
  /// Runs `command`. Never throws for the command's own failure: see ProcessResult.
  ProcessResult run(const std::string& command, const std::string& input = {},
                    double timeoutSeconds = 120) const;
  /// Runs `command` and throws Error with `what`, the host and ssh's or the command's message
  /// when it fails (a refused host key, a dropped connection, a missing program).
  std::string check(const std::string& command, const std::string& what,
                    const std::string& input = {}, double timeoutSeconds = 120) const;
  /// Where: "this machine" or "user@host:port".
  std::string where() const;

 private:
  SshHost m_host;
};

/// ssh's exit status when the connection itself failed (not the remote command).
constexpr int kSshConnectionFailed = 255;

}  // namespace foveal::core
