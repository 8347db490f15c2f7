// Issue 62, item 5: one import dialog for every model format, built from the registry's options
// (core/formats/model_format.h). Every format gets one widget per option (a new option without
// one fails here), the answers come back as the import's options, another format can be chosen,
// the import's message shows under the option it names, the dialog fits 1280x720, and the window
// asks only when an import needs an answer (or the user asks), then reads the file with it.
// With FOVEAL_SCREENSHOT_DIR set it saves import-options-*.png.
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QtTest/QtTest>
#include <exception>

#include "import_options_dialog.h"
#include "import_question.h"
#include "main_window.h"
#include "model_list_model.h"
#include "trace/model_session.h"

using namespace foveal;

namespace {

const QString kDtrb = QStringLiteral(FOVEAL_SOURCE_DIR "/tests/data/dtrb/");
const QString kEasyOcr = QStringLiteral(FOVEAL_SOURCE_DIR "/tests/data/easyocr/");
// 13 classes (11 characters and Attn's two): none of DTRB's standard sets fits.
const QString kTps = kDtrb + "tps-resnet-bilstm-attn.zip-module.pth";

// The message the import gives for `path` read with `options` (empty when it reads).
QString importMessage(const QString& path, const core::ImportOptions& options = {}) {
  try {
    core::ModelSession::open(path.toStdString(), options);
  } catch (const std::exception& ex) {
    return QString::fromStdString(ex.what());
  }
  return {};
}

// The question the window asks when `path` read with `options` fails, as ModelListModel makes it.
ui::ImportQuestion failedImport(const QString& path, const core::ImportOptions& options = {}) {
  ui::ImportQuestion q = ui::recogniseImportFile(path, options);
  q.message = importMessage(path, options);
  return q;
}

void saveShot(QWidget* w, const QString& name) {
  const QString dir = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR");
  if (!dir.isEmpty()) QVERIFY(w->grab().save(dir + "/" + name));
}

// Every widget of the dialog inside it, and its options shown without scrolling.
QStringList outside(ui::ImportOptionsDialog& d) {
  QStringList problems;
  const QRect inside = d.rect();
  for (QWidget* w : d.findChildren<QWidget*>()) {
    if (!w->isVisibleTo(&d) || w->parentWidget() == nullptr) continue;
    const QRect r(w->mapTo(&d, QPoint(0, 0)), w->size());
    if (!inside.contains(r) && !qobject_cast<QScrollBar*>(w))
      problems << QStringLiteral("%1 '%2' at %3,%4 %5x%6")
                      .arg(w->metaObject()->className(), w->objectName())
                      .arg(r.x())
                      .arg(r.y())
                      .arg(r.width())
                      .arg(r.height());
  }
  // The dialog's own rows (labels, the format, the options, the buttons) one under another.
  QList<QWidget*> rows;
  for (QWidget* w : d.findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
    if (w->isVisibleTo(&d) && !w->isWindow()) rows << w;
  for (int i = 0; i < rows.size(); ++i)
    for (int j = i + 1; j < rows.size(); ++j)
      if (rows[i]->geometry().intersects(rows[j]->geometry()))
        problems << QStringLiteral("%1 '%2' overlaps %3 '%4'")
                        .arg(rows[i]->metaObject()->className(), rows[i]->objectName(),
                             rows[j]->metaObject()->className(), rows[j]->objectName());
  auto* scroll = d.findChild<QScrollArea*>();
  if (qEnvironmentVariableIsSet("FOVEAL_LAYOUT_DEBUG"))
    qInfo() << d.size() << d.minimumSize() << d.layout()->minimumSize() << d.sizeHint()
            << scroll->geometry() << scroll->minimumHeight() << scroll->widget()->size();
  if (scroll && scroll->verticalScrollBar()->maximum() > 0)
    problems << QStringLiteral("the options scroll by %1 px")
                    .arg(scroll->verticalScrollBar()->maximum());
  return problems;
}

}  // namespace

class TestImportOptions : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTest"));
    QSettings().clear();
  }
  void init() { QSettings().clear(); }

  // One widget per option of every registered format, of the option's kind, with its default
  // and its help: a format (or an option) the dialog does not show fails here.
  void everyFormatGetsAWidgetPerOption() {
    QVERIFY(core::modelFormats().size() >= 4);
    for (const core::ModelFormat& f : core::modelFormats()) {
      const QString name = QString::fromStdString(f.name);
      ui::ImportOptionsDialog d({"/models/some.pth", name, "its keys", {}, {}, {}});
      QCOMPARE(d.format(), name);
      const auto widgets = d.findChildren<QWidget*>(QRegularExpression("^option-"));
      QVERIFY2(widgets.size() == int(f.options.size()),
               qPrintable(QStringLiteral("%1: %2 widgets for %3 options")
                              .arg(name)
                              .arg(widgets.size())
                              .arg(f.options.size())));
      for (const core::FormatOption& o : f.options) {
        const QString key = QString::fromStdString(o.key);
        QWidget* w = d.optionWidget(key);
        QVERIFY2(w, qPrintable(name + ": no widget for --" + key));
        QCOMPARE(w->objectName(), "option-" + key);
        QVERIFY2(w->toolTip().contains(QString::fromStdString(o.help)), qPrintable(key));
        if (o.flag) {
          QVERIFY2(qobject_cast<QCheckBox*>(w), qPrintable(name + " --" + key + ": a flag"));
        } else {
          auto* edit = qobject_cast<QLineEdit*>(w);
          QVERIFY2(edit, qPrintable(name + " --" + key + ": a value"));
          QCOMPARE(edit->text(), QString());
          QCOMPARE(edit->placeholderText(), o.defaultValue.empty()
                                                ? QStringLiteral("inferred")
                                                : QString::fromStdString(o.defaultValue));
          // Its help is shown, not only in the tooltip.
          bool shown = false;
          for (auto* label : w->parentWidget()->findChildren<QLabel*>())
            shown = shown || label->text() == QString::fromStdString(o.help);
          QVERIFY2(shown, qPrintable(name + " --" + key + ": help not shown"));
        }
      }
      QVERIFY(d.optionWidget("no_such_option") == nullptr);
      QVERIFY(d.options().empty());  // nothing given: the import's defaults
    }
  }

  // The values set come back as the import's options: a flag as "1", text as typed, an empty
  // field left out; what was given before is shown.
  void valuesComeBackAsOptions() {
    ui::ImportOptionsDialog d({kTps, "dtrb", "its keys", {}, {}, {{"imgW", "128"}, {"PAD", "1"}}});
    QCOMPARE(qobject_cast<QLineEdit*>(d.optionWidget("imgW"))->text(), QStringLiteral("128"));
    QVERIFY(qobject_cast<QCheckBox*>(d.optionWidget("PAD"))->isChecked());
    qobject_cast<QLineEdit*>(d.optionWidget("character"))->setText(" 0123456789-");
    qobject_cast<QCheckBox*>(d.optionWidget("PAD"))->setChecked(false);
    qobject_cast<QCheckBox*>(d.optionWidget("sensitive"))->setChecked(true);
    qobject_cast<QLineEdit*>(d.optionWidget("imgW"))->clear();
    qobject_cast<QLineEdit*>(d.optionWidget("imgH"))->setText("48");
    const core::ImportOptions want = {
        {"character", " 0123456789-"}, {"sensitive", "1"}, {"imgH", "48"}};  // space kept
    QVERIFY(d.options() == want);
  }

  // Another format than the recognised one: its options shown, "format" in the answers, what was
  // typed into an option both share kept; back to the recognised one: no "format".
  void formatCanBeOverridden() {
    ui::ImportOptionsDialog d({"/models/mystery.pth", "dtrb", "its keys", {}, {}, {}});
    auto* box = d.findChild<QComboBox*>("importFormat");
    QVERIFY(box);
    QCOMPARE(box->count(), int(core::modelFormats().size()));
    QVERIFY(box->currentText().contains("recognised"));
    qobject_cast<QLineEdit*>(d.optionWidget("character"))->setText("abc");
    qobject_cast<QLineEdit*>(d.optionWidget("imgW"))->setText("200");
    d.setFormat("easyocr");
    QCOMPARE(d.format(), QStringLiteral("easyocr"));
    QVERIFY(d.optionWidget("easyocr") && d.optionWidget("yaml"));
    QVERIFY(!d.optionWidget("imgW"));  // DTRB's only
    qobject_cast<QLineEdit*>(d.optionWidget("easyocr"))->setText("english_g2");
    const core::ImportOptions want = {
        {"format", "easyocr"}, {"character", "abc"}, {"easyocr", "english_g2"}};
    QVERIFY(d.options() == want);
    d.setFormat("dtrb");
    QCOMPARE(qobject_cast<QLineEdit*>(d.optionWidget("imgW"))->text(), QStringLiteral("200"));
    QVERIFY(!d.options().count("format"));
    // The combo box, as the user chooses.
    box->setCurrentIndex(box->findData("strhub"));
    QCOMPARE(d.options().at("format"), std::string("strhub"));
    QVERIFY(d.optionWidget("img_size"));
    // A format forced before is the one shown.
    ui::ImportOptionsDialog forced(
        {"/models/mystery.pth", "dtrb", "its keys", {}, {}, {{"format", "easyocr"}}});
    QCOMPARE(forced.format(), QStringLiteral("easyocr"));
    QCOMPARE(forced.options().at("format"), std::string("easyocr"));
  }

  // A file no format claims: the reason shown, no format chosen, nothing to open until one is.
  void unrecognisedFileWaitsForAChoice() {
    ui::ImportOptionsDialog d(
        {"/models/odd.bin", {}, "/models/odd.bin: not a model file", {}, {}, {}});
    QCOMPARE(d.format(), QString());
    auto* open = d.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open);
    QVERIFY(!open->isEnabled());
    auto* why = d.findChild<QLabel*>("importNotRecognised");
    QVERIFY(why && why->text().contains("Not a model file"));  // the path is the dialog's title
    QVERIFY(d.options().empty());
    d.setFormat("dtrb");
    QVERIFY(open->isEnabled());
    QCOMPARE(d.options().at("format"), std::string("dtrb"));
  }

  // The import's message under the option it names (red, focused), without the file's path; one
  // that names no option of the chosen format above the options.
  void messageShowsUnderItsOption() {
    const QString path = "/models/x.pth";
    QCOMPARE(ui::optionNamedIn(path + ": --imgH must be a whole number (got 'a')", "dtrb"),
             QStringLiteral("imgH"));
    QCOMPARE(ui::optionNamedIn("--imgHigh, then --PAD", "dtrb"), QStringLiteral("PAD"));
    QCOMPARE(ui::optionNamedIn("--format dtrb is wrong", "dtrb"), QString());
    QCOMPARE(ui::optionNamedIn("--imgH", "no-such-format"), QString());
    core::ModelFormat hyphens;
    hyphens.options = {{"easyocr", "a name", false, ""},
                       {"easyocr-input", "how it reads", false, ""}};
    QCOMPARE(ui::optionNamedIn("--easyocr-input must be readtext", hyphens),
             QStringLiteral("easyocr-input"));
    QCOMPARE(ui::optionNamedIn("give --easyocr NAME", hyphens), QStringLiteral("easyocr"));
    QCOMPARE(ui::optionNamedIn("--easyocr-other", hyphens), QString());
    ui::ImportOptionsDialog d(
        {path, "dtrb", "its keys", {}, path + ": --imgH must be a whole number (got 'a')", {}});
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QCOMPARE(d.faultyOption(), QStringLiteral("imgH"));
    QCOMPARE(d.message(), QStringLiteral("--imgH must be a whole number (got 'a')"));
    auto* error = d.findChild<QLabel*>("optionError-imgH");
    QVERIFY(error && error->isVisible());
    QCOMPARE(error->text(), d.message());
    QVERIFY(!d.findChild<QLabel*>("importMessage")->isVisible());
    QCOMPARE(QApplication::focusWidget(), d.optionWidget("imgH"));
    // Under EasyOCR, which has an imgH too, it follows; under strhub, which has none, it goes up.
    d.setFormat("strhub");
    QCOMPARE(d.faultyOption(), QString());
    QVERIFY(d.findChild<QLabel*>("importMessage")->isVisible());
    d.setFormat("easyocr");
    QCOMPARE(d.faultyOption(), QStringLiteral("imgH"));
  }

  // Each format's dialog, with a long message, fits a 1280x720 screen: every widget inside it,
  // its options without scrolling.
  void fitsA1280x720Screen() {
    const QString message = QStringLiteral(
        "/models/x.pth: the file has 13 classes (11 characters besides [GO] and "
        "[s]), which fits neither of DTRB's standard sets; give the characters it "
        "was trained with (--character)");
    for (const core::ModelFormat& f : core::modelFormats()) {
      const QString name = QString::fromStdString(f.name);
      ui::ImportOptionsDialog d({"/models/x.pth",
                                 name,
                                 "a torch.save zip file of 118 tensors, DataParallel's 'module.' "
                                 "prefix, every key under DTRB's stages",
                                 "TPS-ResNet-BiLSTM-Attn, output_channel 512, hidden_size 256",
                                 message,
                                 {}});
      d.show();
      QVERIFY(QTest::qWaitForWindowExposed(&d));
      QTest::qWait(20);
      QVERIFY2(d.width() <= 1280 && d.height() <= 720 - 40,  // a task bar or a title bar
               qPrintable(QStringLiteral("%1: %2x%3").arg(name).arg(d.width()).arg(d.height())));
      const QSize least = d.minimumSizeHint().expandedTo(d.minimumSize());
      QVERIFY2(least.width() <= 1280 && least.height() <= 720 - 40,
               qPrintable(QStringLiteral("%1: at least %2x%3")
                              .arg(name)
                              .arg(least.width())
                              .arg(least.height())));
      saveShot(&d, "import-options-fit-" + name + ".png");
      const QStringList problems = outside(d);
      QVERIFY2(problems.isEmpty(), qPrintable(name + ": " + problems.join("; ")));
    }
  }

  // The question about real files: the format and why, as the sniffers say; a file that is not
  // there names itself. Rendered for a DTRB file whose characters nothing names and for an
  // EasyOCR file.
  void questionsAboutRealFiles() {
    const ui::ImportQuestion tps = failedImport(kTps);
    QCOMPARE(tps.format, QStringLiteral("dtrb"));
    QVERIFY2(tps.why.contains("FeatureExtraction"), qPrintable(tps.why));
    QVERIFY2(tps.message.contains("--character"), qPrintable(tps.message));
    {
      ui::ImportOptionsDialog d(tps);
      d.show();
      QVERIFY(QTest::qWaitForWindowExposed(&d));
      QTest::qWait(20);  // the layout settles
      QCOMPARE(d.faultyOption(), QStringLiteral("character"));
      saveShot(&d, "import-options-dtrb.png");
      const QStringList problems = outside(d);
      QVERIFY2(problems.isEmpty(), qPrintable(problems.join("; ")));
    }
    const ui::ImportQuestion easy = ui::recogniseImportFile(kEasyOcr + "english_g2.pth", {});
    QCOMPARE(easy.format, QStringLiteral("easyocr"));
    QVERIFY2(easy.why.contains("english_g2"), qPrintable(easy.why));
    {
      ui::ImportOptionsDialog d(easy);
      d.show();
      QVERIFY(QTest::qWaitForWindowExposed(&d));
      QTest::qWait(20);
      saveShot(&d, "import-options-easyocr.png");
      const QStringList problems = outside(d);
      QVERIFY2(problems.isEmpty(), qPrintable(problems.join("; ")));
    }
    // Options of another format than the content's: recognised all the same.
    const ui::ImportQuestion mixed =
        ui::recogniseImportFile(kTps, {{"easyocr", "english_g2"}, {"format", "easyocr"}});
    QCOMPARE(mixed.format, QStringLiteral("dtrb"));
    QCOMPARE(mixed.options.at("format"), std::string("easyocr"));
    const ui::ImportQuestion gone = ui::recogniseImportFile(m_dir.filePath("gone.pth"), {});
    QCOMPARE(gone.format, QString());
    QVERIFY2(gone.why.contains("gone.pth"), qPrintable(gone.why));
  }

  // The answers are remembered per file (any spelling of its path), forgotten on request; those
  // of the DTRB-only dialog of earlier versions are read as options.
  void answersAreRememberedPerFile() {
    const QString path = m_dir.filePath("model.pth");
    QVERIFY(!ui::rememberedImportOptions(path));
    ui::rememberImportOptions(path, {{"character", "abc"}, {"PAD", "1"}});
    const auto back = ui::rememberedImportOptions(m_dir.path() + "/./model.pth");
    QVERIFY(back && *back == (core::ImportOptions{{"character", "abc"}, {"PAD", "1"}}));
    ui::forgetImportOptions(path);
    QVERIFY(!ui::rememberedImportOptions(path));
    // Earlier versions' answers: their defaults were DTRB's, only what differs is an option.
    const QString old = m_dir.filePath("old.pth");
    const QByteArray hash = QCryptographicHash::hash(QFileInfo(old).absoluteFilePath().toUtf8(),
                                                     QCryptographicHash::Sha1)
                                .toHex()
                                .left(16);
    QSettings s;
    s.beginGroup("dtrb-options/" + QString::fromLatin1(hash));
    s.setValue("character", "0123456789-");
    s.setValue("sensitive", false);
    s.setValue("imgH", 32);
    s.setValue("imgW", 128);
    s.setValue("PAD", true);
    s.setValue("batch_max_length", 25);
    s.endGroup();
    const auto legacy = ui::rememberedImportOptions(old);
    QVERIFY(legacy);
    QVERIFY(*legacy ==
            (core::ImportOptions{{"character", "0123456789-"}, {"imgW", "128"}, {"PAD", "1"}}));
    ui::forgetImportOptions(old);
    QVERIFY(!ui::rememberedImportOptions(old));
  }

  // The window asks when the import needs an answer, shows a wrong answer's message under its
  // option, and reads the file with the right one; a format chosen in the dialog is used.
  void windowAsksAgainUnderTheOptionItNames() {
    ui::rememberImportOptions(kTps, {{"character", "0123"}});  // 4 characters for 11
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    QStringList seen;
    QTimer answer;
    answer.setInterval(20);
    connect(&answer, &QTimer::timeout, this, [&] {
      auto* d = qobject_cast<ui::ImportOptionsDialog*>(QApplication::activeModalWidget());
      if (!d) return;
      seen << d->faultyOption() + ": " + d->message();
      qobject_cast<QLineEdit*>(d->optionWidget("character"))->setText("0123456789-");
      d->accept();
    });
    answer.start();
    QVERIFY(w.openModel(kTps));
    QTRY_VERIFY_WITH_TIMEOUT(
        w.models()->loadingCount() == 0 && w.models()->rowCount() == 1 && w.models()->session(0),
        30000);
    QCOMPARE(seen.size(), 1);
    QVERIFY2(seen[0].startsWith("character: --character has 4 characters"), qPrintable(seen[0]));
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    QCOMPARE(int(w.models()->session(0)->config().charset.size()), 11);
    QCOMPARE(ui::rememberedImportOptions(kTps)->at("character"), std::string("0123456789-"));
  }

  // An EasyOCR file under a name EasyOCR never released: nothing says whose characters its
  // classes are, so the window asks; the user names the released model (and EasyOCR, when
  // another format claimed the file) and it reads as that one.
  void windowReadsAFileAsTheFormatChosen() {
    const QString mystery = m_dir.filePath("mystery.pth");
    QFile::remove(mystery);
    QVERIFY(QFile::copy(kEasyOcr + "english_g2.pth", mystery));
    const ui::ImportQuestion q = failedImport(mystery);
    QVERIFY2(!q.message.isEmpty(), "the renamed file read without an answer");
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    QStringList seen;
    QTimer answer;
    answer.setInterval(20);
    connect(&answer, &QTimer::timeout, this, [&] {
      auto* d = qobject_cast<ui::ImportOptionsDialog*>(QApplication::activeModalWidget());
      if (!d) return;
      seen << d->format();
      saveShot(d, "import-options-easyocr-unnamed.png");
      d->setFormat("easyocr");
      qobject_cast<QLineEdit*>(d->optionWidget("easyocr"))->setText("english_g2");
      d->accept();
    });
    answer.start();
    QVERIFY(w.openModel(mystery));
    QTRY_VERIFY_WITH_TIMEOUT(
        w.models()->loadingCount() == 0 && w.models()->rowCount() == 1 && w.models()->session(0),
        30000);
    QCOMPARE(seen, QStringList{q.format});
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    const auto remembered = ui::rememberedImportOptions(mystery);
    QVERIFY(remembered && remembered->at("easyocr") == "english_g2");
    QCOMPARE(
        w.models()->session(0)->config().charset,
        core::ModelSession::open((kEasyOcr + "english_g2.pth").toStdString())->config().charset);
  }

  // Nothing asked for a file that reads with the defaults; File > Open Model with Options...
  // (askImportOptions, then openModelWith) reads a listed file again with the answers.
  void answersGivenUnaskedReadTheFileAgain() {
    const QString ctc = kDtrb + "none-resnet-none-ctc.legacy.pth";
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    QVERIFY(w.openModel(ctc));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0 && w.models()->session(0), 30000);
    QVERIFY(QApplication::activeModalWidget() == nullptr);
    QCOMPARE(w.models()->session(0)->config().preprocessing.inputW, 100);
    QTimer answer;
    answer.setInterval(20);
    QString shownFormat;
    bool cancel = false;
    connect(&answer, &QTimer::timeout, this, [&] {
      auto* d = qobject_cast<ui::ImportOptionsDialog*>(QApplication::activeModalWidget());
      if (!d) return;
      if (cancel) return d->reject();
      shownFormat = d->format();
      qobject_cast<QLineEdit*>(d->optionWidget("imgW"))->setText("128");
      d->accept();
    });
    answer.start();
    std::optional<core::ImportOptions> given;
    bool answered = false;
    ui::askImportOptions(ctc, {}, &w, [&](std::optional<core::ImportOptions> o) {
      answered = true;
      given = o;
    });
    QTRY_VERIFY_WITH_TIMEOUT(answered, 30000);
    QCOMPARE(shownFormat, QStringLiteral("dtrb"));
    QVERIFY(given && *given == (core::ImportOptions{{"imgW", "128"}}));
    QVERIFY(w.openModelWith(ctc, *given));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0 && w.models()->session(0), 30000);
    QCOMPARE(w.models()->rowCount(), 1);
    QCOMPARE(w.models()->session(0)->config().preprocessing.inputW, 128);
    QCOMPARE(ui::rememberedImportOptions(ctc)->at("imgW"), std::string("128"));
    // Cancelled: nothing given.
    cancel = true;
    answered = false;
    ui::askImportOptions(ctc, {}, &w, [&](std::optional<core::ImportOptions> o) {
      answered = true;
      given = o;
    });
    QTRY_VERIFY_WITH_TIMEOUT(answered, 30000);
    QVERIFY(!given);
  }
};

QTEST_MAIN(TestImportOptions)
#include "test_import_options.moc"
