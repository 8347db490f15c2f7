#include "run/remote_shell.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/error.h"

namespace foveal::core {

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string shellJoin(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += shellQuote(w);
  }
  return out;
}

namespace {

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A started child and the parent's ends of its stdin, stdout and stderr pipes.
struct Child {
  pid_t pid;
  int in, out, err;
};

// Forks and executes argv with its standard streams on pipes. Throws Error when it cannot start
// (execvp's errno comes back through a close-on-exec pipe).
Child startChild(const std::vector<std::string>& argv) {
  int in[2], out[2], err[2], exec[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC) ||
      ::pipe2(exec, O_CLOEXEC))
    throw Error("cannot start " + argv[0] + ": " + std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("cannot start " + argv[0] + ": " + std::strerror(errno));
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvp(args[0], args.data());
    const int e = errno;  // tell the parent why, through the close-on-exec pipe
    (void)!::write(exec[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::close(exec[1]);
  int execErrno = 0;
  const bool execFailed = ::read(exec[0], &execErrno, sizeof execErrno) == sizeof execErrno;
  ::close(exec[0]);
  if (execFailed) {
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    ::waitpid(pid, nullptr, 0);
    throw Error("cannot start " + argv[0] + ": " + std::strerror(execErrno));
  }
  return {pid, in[1], out[0], err[0]};
}

// Writes `input` to the child's stdin and reads its stdout and stderr into `r` until both close
// or the time is up (then the child is killed); closes the three.
void exchangeWithChild(const Child& c, const std::string& input, double timeoutSeconds,
                       ProcessResult& r) {
  int inFd = c.in, outFd = c.out, errFd = c.err;
  ::fcntl(inFd, F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (input.empty()) closeFd(inFd);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeoutSeconds * 1000));
  char buf[65536];
  while (outFd >= 0 || errFd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      r.timedOut = true;
      ::kill(c.pid, SIGKILL);
      break;
    }
    pollfd fds[3];
    int n = 0;
    if (outFd >= 0) fds[n++] = {outFd, POLLIN, 0};
    if (errFd >= 0) fds[n++] = {errFd, POLLIN, 0};
    if (inFd >= 0) fds[n++] = {inFd, POLLOUT, 0};
    const int ready = ::poll(fds, n, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < n && ready > 0; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == inFd) {
        const ssize_t k = ::write(inFd, input.data() + written, input.size() - written);
        if (k > 0) written += static_cast<size_t>(k);
        if (k < 0 && errno != EAGAIN) closeFd(inFd);
        if (written == input.size()) closeFd(inFd);
        continue;
      }
      const ssize_t k = ::read(fds[i].fd, buf, sizeof buf);
      if (k > 0) {
        (fds[i].fd == outFd ? r.out : r.err).append(buf, static_cast<size_t>(k));
      } else if (k == 0 || errno != EAGAIN) {
        if (fds[i].fd == outFd)
          closeFd(outFd);
        else
          closeFd(errFd);
      }
    }
  }
  closeFd(inFd);
  closeFd(outFd);
  closeFd(errFd);
}

}  // namespace

ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& input,
                         double timeoutSeconds) {
  if (argv.empty()) throw Error("runProcess: no program");
  const Child child = startChild(argv);
  ProcessResult r;
  exchangeWithChild(child, input, timeoutSeconds, r);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

namespace {

// Characters that make a user or host name something other than a name: an option to ssh
// ("-oProxyCommand=..."), a second destination, or shell syntax in a config's %h expansion.
bool nameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

void checkName(const std::string& name, const std::string& what, const std::string& text) {
  if (name.empty()) throw Error("SSH destination '" + text + "': the " + what + " is empty");
  if (name[0] == '-')
    throw Error("SSH destination '" + text + "': the " + what + " starts with '-'");
  for (char c : name)
    if (!nameChar(c))
      throw Error("SSH destination '" + text + "': the " + what + " contains '" +
                  std::string(1, c) + "' (letters, digits, '.', '-' and '_' only)");
}

}  // namespace

SshHost SshHost::parse(const std::string& text) {
  SshHost h;
  std::string rest = text;
  const size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    h.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    checkName(h.user, "user name", text);
  }
  const size_t colon = rest.find(':');
  if (colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    long v = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || v > 65535) {
        v = -1;
        break;
      }
      v = v * 10 + (c - '0');
    }
    if (port.empty() || v < 1 || v > 65535)
      throw Error("SSH destination '" + text + "': port '" + port + "' is not a number 1-65535");
    h.port = static_cast<int>(v);
  }
  checkName(rest, "host name", text);
  h.host = rest;
  return h;
}

std::string SshHost::toString() const {
  std::string s = user.empty() ? host : user + "@" + host;
  if (port) s += ":" + std::to_string(port);
  return s;
}

std::vector<std::string> RemoteShell::argv(const std::string& command) const {
  if (local()) return {"/bin/sh", "-c", command};
  std::vector<std::string> a = {"ssh"};
  if (!m_host.configFile.empty()) a.insert(a.end(), {"-F", m_host.configFile});
  if (!m_host.identityFile.empty())
    a.insert(a.end(), {"-i", m_host.identityFile, "-o", "IdentitiesOnly=yes"});
  // BatchMode: keys or an agent only, and a failure instead of a prompt. Host keys are checked
  // strictly: an unknown host or a changed key ends the connection with ssh's own message.
  a.insert(a.end(), {"-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o",
                     "ConnectTimeout=15", "-o", "ServerAliveInterval=15"});
  if (m_host.port) a.insert(a.end(), {"-p", std::to_string(m_host.port)});
  if (!m_host.user.empty()) a.insert(a.end(), {"-l", m_host.user});
  // "--" ends ssh's options; the remote command is one argument, parsed by the remote shell.
  a.insert(a.end(), {"--", m_host.host, command});
  return a;
}

ProcessResult RemoteShell::run(const std::string& command, const std::string& input,
                               double timeoutSeconds) const {
  return runProcess(argv(command), input, timeoutSeconds);
}

std::string RemoteShell::where() const { return local() ? "this machine" : m_host.toString(); }

namespace {

// ssh's last line says what happened ("Host key verification failed."); the banner before it
// says why, and a user needs the why in one line.
std::string sshReason(const std::string& err) {
  std::string last;
  size_t end = err.size();
  while (end > 0 && last.empty()) {
    const size_t start = err.rfind('\n', end - 1);
    const size_t b = start == std::string::npos ? 0 : start + 1;
    last = err.substr(b, end - b);
    while (!last.empty() && (last.back() == '\r' || last.back() == ' ')) last.pop_back();
    end = start == std::string::npos ? 0 : start;
  }
  if (err.find("REMOTE HOST IDENTIFICATION HAS CHANGED") != std::string::npos)
    return last +
           " The host's key differs from the one known_hosts holds for it (a reinstalled "
           "server, or someone in between); ssh refused to connect. Check the key with "
           "the host's administrator before you replace it.";
  if (err.find("No ") != std::string::npos && err.find("host key is known") != std::string::npos)
    return last +
           " The host's key is not in known_hosts: connect once with ssh and check its "
           "fingerprint first.";
  return last.empty() ? "no message" : last;
}

}  // namespace

std::string RemoteShell::check(const std::string& command, const std::string& what,
                               const std::string& input, double timeoutSeconds) const {
  const ProcessResult r = run(command, input, timeoutSeconds);
  if (r.ok()) return r.out;
  std::string msg = r.err;
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
  std::string why;
  if (r.timedOut)
    why = "no answer within " + std::to_string(static_cast<int>(timeoutSeconds)) + " s";
  else if (!local() && r.exitCode == kSshConnectionFailed)
    why = "ssh could not connect: " + sshReason(msg);
  else
    why = "exit status " + std::to_string(r.exitCode) + (msg.empty() ? "" : ": " + msg);
  throw Error(what + " on " + where() + " failed (" + why + ")");
}

}  // namespace foveal::core
