// Runs on other machines, the parts that need no daemon: shell quoting proved by a real shell
// (hostile names stay one word and run nothing), child processes (stdin, binary stdout, exit
// status, time limit), SSH destinations and run targets parsed and refused, the Slurm batch script
// (valid bash, its options, its quoted paths), the SSH launcher started through /bin/sh with a
// stand-in trainer program, and Slurm's state answers. The daemons' side is in
// tests/e2e/cluster_ssh.sh and cluster_slurm.sh.
#include <QtTest/QtTest>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "run/remote_run.h"
#include "run/remote_shell.h"
#include "run/run_target.h"

using namespace foveal::core;
namespace fs = std::filesystem;

namespace {

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* kHostile[] = {
    "plain",
    "with space",
    "it's",
    "\"double\"",
    "$(touch PWNED)",
    "`touch PWNED`",
    "a; touch PWNED",
    "a && touch PWNED",
    "a | touch PWNED",
    "$HOME ${HOME} $((1+1))",
    "back\\slash",
    "new\nline",
    "'; touch PWNED; echo '",
    "",
    "*",
    "~",
};

}  // namespace

class TestRunTarget : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_tmp;
  fs::path dir() const { return m_tmp.path().toStdString(); }

 private Q_SLOTS:
  void quotingKeepsEveryWordAndRunsNothing_data() {
    QTest::addColumn<QString>("word");
    for (const char* w : kHostile) QTest::newRow(w[0] ? w : "(empty)") << QString::fromUtf8(w);
  }
  void quotingKeepsEveryWordAndRunsNothing() {
    QFETCH(QString, word);
    const std::string w = word.toStdString();
    const fs::path canary = dir() / "PWNED";
    // The quoted word, printed by a real shell started in the temporary folder.
    const ProcessResult r = runProcess(
        {"/bin/sh", "-c",
         "cd " + shellQuote(dir().string()) + " && printf '%s|' " + shellJoin({w, "second"})});
    QVERIFY2(r.ok(), r.err.c_str());
    QCOMPARE(QString::fromStdString(r.out), word + "|second|");
    QVERIFY2(!fs::exists(canary), "a quoted word executed a command");
  }

  void processesPassStdinAndBinaryStdout() {
    std::string bytes("a\0b\xff\n", 5);
    const ProcessResult r = runProcess({"cat"}, bytes);
    QVERIFY(r.ok());
    QCOMPARE(r.out.size(), bytes.size());
    QVERIFY(r.out == bytes);
    const ProcessResult e = runProcess({"/bin/sh", "-c", "echo oops >&2; exit 7"});
    QCOMPARE(e.exitCode, 7);
    QCOMPARE(QString::fromStdString(e.err), QString("oops\n"));
  }

  void processesTimeOutAndMissingProgramsAreNamed() {
    const ProcessResult r = runProcess({"sleep", "5"}, {}, 0.3);
    QVERIFY(r.timedOut);
    QCOMPARE(r.signal, 9);
    try {
      runProcess({"no-such-program-foveal"});
      QFAIL("a missing program started");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("cannot start no-such-program-foveal"), e.what());
    }
  }

  void localShellReportsFailures() {
    const RemoteShell sh;
    QCOMPARE(QString::fromStdString(sh.check("printf ok", "printing")), QString("ok"));
    try {
      sh.check("echo 'no such file' >&2; exit 3", "reading the run");
      QFAIL("a failed command passed");
    } catch (const Error& e) {
      QCOMPARE(QString(e.what()),
               QString("reading the run on this machine failed (exit status 3: no such file)"));
    }
  }

  void sshArgvChecksHostKeysInBatchMode() {
    SshHost h = SshHost::parse("alice@gpu-1.lab:2222");
    h.configFile = "/etc/foveal/ssh_config";
    const auto a = RemoteShell(h).argv("echo hi");
    const QStringList args = [&] {
      QStringList l;
      for (const auto& s : a) l << QString::fromStdString(s);
      return l;
    }();
    QCOMPARE(args.first(), QString("ssh"));
    QVERIFY(args.contains("BatchMode=yes"));
    QVERIFY(args.contains("StrictHostKeyChecking=yes"));
    QVERIFY(!args.join(' ').contains("StrictHostKeyChecking=no"));
    QCOMPARE(args.mid(args.indexOf("-p"), 2), QStringList({"-p", "2222"}));
    QCOMPARE(args.mid(args.indexOf("-l"), 2), QStringList({"-l", "alice"}));
    QCOMPARE(args.mid(args.indexOf("-F"), 2), QStringList({"-F", "/etc/foveal/ssh_config"}));
    // The destination after "--" (never an option), the command as one last argument.
    QCOMPARE(args.mid(args.size() - 3), QStringList({"--", "gpu-1.lab", "echo hi"}));
    QVERIFY(!args.contains("-i"));  // the agent's or the config's keys
    // A named identity (the window's host entry, --ssh-identity): that key only.
    h.identityFile = "/home/alice/.ssh/lab key";
    QStringList withKey;
    for (const auto& s : RemoteShell(h).argv("echo hi")) withKey << QString::fromStdString(s);
    QCOMPARE(withKey.mid(withKey.indexOf("-i"), 2),
             QStringList({"-i", "/home/alice/.ssh/lab key"}));
    QVERIFY(withKey.contains("IdentitiesOnly=yes"));
    QVERIFY(withKey.indexOf("-i") < withKey.indexOf("--"));
  }

  void sshDestinations_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("parsed");  // "" when refused
    QTest::addColumn<QString>("error");
    QTest::newRow("host") << "gpu"
                          << "gpu"
                          << "";
    QTest::newRow("user, port") << "bob@gpu.lab:2200"
                                << "bob@gpu.lab:2200"
                                << "";
    QTest::newRow("option") << "-oProxyCommand=x"
                            << ""
                            << "the host name starts with '-'";
    QTest::newRow("user option") << "-x@h"
                                 << ""
                                 << "the user name starts with '-'";
    QTest::newRow("shell") << "h$(id)"
                           << ""
                           << "the host name contains '$'";
    QTest::newRow("space") << "a b"
                           << ""
                           << "the host name contains ' '";
    QTest::newRow("port") << "h:99999"
                          << ""
                          << "port '99999' is not a number 1-65535";
    QTest::newRow("no port") << "h:"
                             << ""
                             << "port '' is not a number";
    QTest::newRow("empty") << ""
                           << ""
                           << "the host name is empty";
  }
  void sshDestinations() {
    QFETCH(QString, text);
    QFETCH(QString, parsed);
    QFETCH(QString, error);
    try {
      const SshHost h = SshHost::parse(text.toStdString());
      QVERIFY2(!parsed.isEmpty(), "accepted");
      QCOMPARE(QString::fromStdString(h.toString()), parsed);
    } catch (const Error& e) {
      QVERIFY2(parsed.isEmpty(), e.what());
      QVERIFY2(QString(e.what()).contains(error), e.what());
      QVERIFY2(QString(e.what()).contains("'" + text + "'"), e.what());
    }
  }

  void targets() {
    RunTarget t = RunTarget::parse("ssh://me@box:2022/runs/a b");
    QCOMPARE(t.kind, RunTarget::Kind::Ssh);
    QCOMPARE(QString::fromStdString(t.host.toString()), QString("me@box:2022"));
    QCOMPARE(QString::fromStdString(t.remoteDir), QString("runs/a b"));
    QVERIFY(t.mirrored());
    QCOMPARE(QString::fromStdString(t.toString()), QString("ssh://me@box:2022/runs/a b"));
    t = RunTarget::parse("slurm://login//scratch/r");
    QCOMPARE(t.kind, RunTarget::Kind::Slurm);
    QCOMPARE(QString::fromStdString(t.remoteDir), QString("/scratch/r"));
    t = RunTarget::parse("slurm");
    QCOMPARE(t.kind, RunTarget::Kind::Slurm);
    QVERIFY(!t.mirrored());
    QCOMPARE(RunTarget::parse("local").kind, RunTarget::Kind::Local);
    for (const char* bad : {"ssh://box", "ssh://box/", "http://x/y", "slurm:/x"}) {
      try {
        RunTarget::parse(bad);
        QFAIL(bad);
      } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains(QString("'") + bad + "'"), e.what());
      }
    }
    // The description survives its JSON.
    t = RunTarget::parse("slurm://u@login:23/x");
    t.slurm.partition = "gpu";
    t.slurm.gpus = 4;
    t.slurm.ntasks = 2;
    t.slurm.extra = {"--constraint=a100"};
    t.host.configFile = "/c";
    t.host.identityFile = "/k";
    const RunTarget back = RunTarget::fromJson(t.toJson(), "remote.json");
    QCOMPARE(QString::fromStdString(back.toJson()), QString::fromStdString(t.toJson()));
    try {
      RunTarget::fromJson("{\"kind\": 3}", "x/remote.json");
      QFAIL("accepted");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).startsWith("x/remote.json: not a run target"), e.what());
    }
  }

  void batchScript() {
    RunTarget t = RunTarget::parse("slurm");
    t.remoteDir = "/runs/it's $(touch PWNED); x";
    t.remoteCli = "/opt/foveal dir/foveal-cli";
    t.slurm.partition = "gpu";
    t.slurm.gpus = 2;
    t.slurm.cpusPerTask = 8;
    t.slurm.memory = "32G";
    t.slurm.time = "1-00:00:00";
    t.slurm.account = "lab";
    t.slurm.qos = "high";
    t.slurm.ntasks = 2;
    t.slurm.signalSeconds = 300;
    t.slurm.extra = {"--constraint=a100", "#SBATCH --exclusive"};
    const std::string s =
        t.batchScript({"--preset", "digits-soft", "--data", "a;b $(x)"}, {"--iterations", "500"});
    for (const char* line :
         {"#SBATCH --requeue\n", "#SBATCH --signal=B:TERM@300\n", "#SBATCH --partition=gpu\n",
          "#SBATCH --gres=gpu:2\n", "#SBATCH --cpus-per-task=8\n", "#SBATCH --mem=32G\n",
          "#SBATCH --time=1-00:00:00\n", "#SBATCH --account=lab\n", "#SBATCH --qos=high\n",
          "#SBATCH --ntasks=2\n", "#SBATCH --constraint=a100\n", "#SBATCH --exclusive\n",
          "RANK=$SLURM_PROCID", "WORLD_SIZE=$SLURM_NTASKS", "LOCAL_RANK=$SLURM_LOCALID",
          "MASTER_ADDR=", "srun ", "trap 'scancel --signal=TERM \"$SLURM_JOB_ID\"' TERM\n"})
      QVERIFY2(s.find(line) != std::string::npos, line);
    const fs::path script = dir() / "job.sbatch";
    std::ofstream(script) << s;
    ProcessResult r = runProcess({"bash", "-n", script.string()});
    QVERIFY2(r.ok(), r.err.c_str());
    // What the script's variables and argument arrays hold, evaluated by bash up to srun.
    const std::string head = s.substr(0, s.find("export MASTER_ADDR"));
    r = runProcess({"bash", "-c",
                    "cd " + shellQuote(dir().string()) + " && " + head +
                        " printf '%s|' \"$run\" \"$cli\" \"${args[@]}\""});
    QVERIFY2(r.ok(), r.err.c_str());
    QCOMPARE(QString::fromStdString(r.out),
             QString("/runs/it's $(touch PWNED); x|/opt/foveal dir/foveal-cli|train|--run|"
                     "/runs/it's $(touch PWNED); x|--preset|digits-soft|--data|a;b $(x)|"));
    QVERIFY(!fs::exists(dir() / "PWNED"));
    t.slurm.requeue = false;
    t.slurm.signalSeconds = 0;
    const std::string plain = t.batchScript({});
    QVERIFY(plain.find("#SBATCH --requeue") == std::string::npos);
    QVERIFY(plain.find("#SBATCH --signal") == std::string::npos);
  }

  void slurmOptionsRefuseWhatBreaksTheScript() {
    SlurmOptions o;
    o.partition = "gpu\n#SBATCH --account=other";
    try {
      o.validate();
      QFAIL("accepted a line break");
    } catch (const Error& e) {
      QVERIFY2(
          QString(e.what()).contains("--partition") && QString(e.what()).contains("line break"),
          e.what());
    }
    o = {};
    o.ntasks = 0;
    try {
      o.validate();
      QFAIL("accepted 0 tasks");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("--ntasks 0: must be at least 1"), e.what());
    }
  }

  // The SSH launcher's command, run through /bin/sh here with a stand-in trainer that records
  // its arguments: the pid comes back, the exit status is recorded, every argument arrives whole.
  void sshLauncherQuotesAndRecords() {
    const fs::path fake = dir() / "fake cli";
    std::ofstream(fake) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$FOVEAL_ARGS_OUT\"\nexit 3\n";
    fs::permissions(fake, fs::perms::owner_all);
    RunTarget t = RunTarget::parse("ssh://h/x");
    t.remoteDir = (dir() / "run $(touch PWNED) 'q'").string();
    t.remoteCli = fake.string();
    const std::string out = (dir() / "args.txt").string();
    ::setenv("FOVEAL_ARGS_OUT", out.c_str(), 1);
    const std::string pid =
        RemoteShell().check(t.sshLaunchCommand({"--data", "a; b", "$(touch PWNED)"}), "launch");
    QVERIFY2(std::stoi(pid) > 0, pid.c_str());
    const fs::path exitFile = fs::path(t.remoteDir) / kRemoteControlDir / "exit";
    for (int i = 0; i < 100 && !fs::exists(exitFile); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    QCOMPARE(QString::fromStdString(readAll(exitFile)), QString("3\n"));
    QCOMPARE(QString::fromStdString(readAll(out)),
             QString::fromStdString("train\n--run\n" + t.remoteDir +
                                    "\n--data\na; b\n$(touch PWNED)\n"));
    QVERIFY(!fs::exists(dir() / "PWNED"));
  }

  void slurmStates_data() {
    QTest::addColumn<QString>("output");
    QTest::addColumn<QString>("state");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<int>("restarts");
    QTest::newRow("pending")
        << "squeue|PENDING|Resources\nJobId=4 JobState=PENDING Reason=Resources "
           "Restarts=0 ExitCode=0:0\n"
        << "pending"
        << "Resources" << 0;
    QTest::newRow("running, requeued once")
        << "squeue|RUNNING|None\nJobId=4 JobState=RUNNING Reason=None Restarts=1 ExitCode=0:0\n"
        << "running"
        << "" << 1;
    QTest::newRow("completed (scontrol)")
        << "JobId=4 JobName=foveal JobState=COMPLETED Reason=None Restarts=0 ExitCode=0:0\n"
        << "completed"
        << "" << 0;
    QTest::newRow("stopped: the trainer's 130")
        << "JobId=4 JobState=FAILED Reason=NonZeroExitCode Restarts=0 ExitCode=130:0\n"
        << "stopped"
        << "exit code 130:0" << 0;
    QTest::newRow("failed (sacct)") << "sacct|FAILED|1:0\n"
                                    << "failed"
                                    << "exit code 1:0" << 0;
    QTest::newRow("cancelled by") << "sacct|CANCELLED by 0|0:15\n"
                                  << "cancelled"
                                  << "exit code 0:15" << 0;
    QTest::newRow("timeout") << "sacct|TIMEOUT|0:0\n"
                             << "timeout"
                             << "" << 0;
    QTest::newRow("preempted") << "sacct|PREEMPTED|0:0\n"
                               << "preempted"
                               << "" << 0;
    QTest::newRow("node failure") << "JobId=4 JobState=NODE_FAIL Reason=None ExitCode=0:0\n"
                                  << "node failure"
                                  << "" << 0;
    QTest::newRow("requeued") << "squeue|REQUEUED|None\n"
                              << "requeued"
                              << "" << 0;
    QTest::newRow("forgotten") << ""
                               << "gone"
                               << "" << 0;
  }
  void slurmStates() {
    QFETCH(QString, output);
    QFETCH(QString, state);
    QFETCH(QString, reason);
    QFETCH(int, restarts);
    const JobStatus st = parseSlurmStatus(output.toStdString());
    QCOMPARE(QString(jobStateName(st.state)), state);
    QCOMPARE(QString::fromStdString(st.reason), reason);
    QCOMPARE(st.restarts, restarts);
  }

  void remoteRunsAreDescribedInTheirFolder() {
    const std::string local = (dir() / "remote-run").string();
    RunTarget t = RunTarget::parse("ssh://u@h:2/r");
    RemoteRun::create(local, t, {"--preset", "digits-soft"});
    QVERIFY(RemoteRun::isRemoteRun(local));
    const RemoteRun r = RemoteRun::open(local);
    QCOMPARE(QString::fromStdString(r.target().toString()), QString("ssh://u@h:2/r"));
    QCOMPARE(r.status().state, JobState::Unknown);  // never submitted: nothing to ask
    // Issue 64: latest.state stays on the host; the description says whether the mirror saw it.
    QVERIFY(!r.resumable());
    {
      std::ifstream in(local + "/remote.json");
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const auto at = text.find("\"remote_state\": \"\"");
      QVERIFY2(at != std::string::npos, text.c_str());
      text.replace(at, std::string("\"remote_state\": \"\"").size(),
                   "\"remote_state\": \"4096 1700000000.5 77\"");
      std::ofstream(local + "/remote.json") << text;
    }
    QVERIFY(RemoteRun::open(local).resumable());
    try {
      RemoteRun::create(local, t, {});
      QFAIL("a second run in one folder");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("already holds a run"), e.what());
    }
    try {
      RemoteRun::open(dir().string());
      QFAIL("opened a folder without a run");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("not a run on another machine"), e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestRunTarget)
#include "test_run_target.moc"
