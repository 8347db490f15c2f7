// The main window under the offscreen platform: loading fills the views, stepping moves every
// view together, bad files leave the window usable, image <-> widget mapping is exact.
#include <QLabel>
#include <QSlider>
#include <QtTest/QtTest>

#include "main_window.h"
#include "model_session.h"
#include "test_models.h"
#include "trace_view.h"

using namespace foveal;

class TestMainWindow : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_model;
  QString m_image = QStringLiteral(FOVEAL_SAMPLES_DIR "/images/digits-46214.png");

  void loadBoth(ui::MainWindow& w) {
    QVERIFY(w.openModel(m_model));
    QVERIFY(w.openImage(m_image));
    QTRY_VERIFY_WITH_TIMEOUT(w.stepCount() > 0 && !w.isTracing(), 30000);
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = m_dir.filePath("sharp.fvm");
    auto cfg = test::tinyConfig(core::AttentionKind::Sharp, core::ContextKind::Chain, 2);
    core::ModelSession::create(cfg, 1)->save(m_model.toStdString());
  }

  void emptyWindowIsUsable() {
    ui::MainWindow w;
    w.show();
    QCOMPARE(w.stepCount(), 0);
    w.nextStep();  // nothing to step through: no crash, no change
    QCOMPARE(w.stepCount(), 0);
    QVERIFY(w.errorText().isEmpty());
  }

  void loadingFillsTheViews() {
    ui::MainWindow w;
    w.show();
    loadBoth(w);
    QVERIFY(w.trace());
    QCOMPARE(w.step(), 0);
    QCOMPARE(w.traceView()->step(), 0);
    auto* slider = w.findChild<QSlider*>();
    QVERIFY(slider && slider->maximum() == w.stepCount() - 1);
    QVERIFY(w.errorText().isEmpty());
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) {
      w.resize(1100, 520);
      w.setStep(2);
      QVERIFY(w.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/main-window.png"));
    }
  }

  void keysAndSliderMoveEveryView() {
    ui::MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    loadBoth(w);
    QSignalSpy spy(&w, &ui::MainWindow::stepChanged);
    QTest::keyClick(&w, Qt::Key_Right);
    QCOMPARE(w.step(), 1);
    QCOMPARE(w.traceView()->step(), 1);
    QTest::keyClick(&w, Qt::Key_End);
    QCOMPARE(w.step(), w.stepCount() - 1);
    QTest::keyClick(&w, Qt::Key_Right);  // stays at the last step
    QCOMPARE(w.step(), w.stepCount() - 1);
    QTest::keyClick(&w, Qt::Key_Home);
    QCOMPARE(w.step(), 0);
    auto* slider = w.findChild<QSlider*>();
    slider->setValue(2);
    QCOMPARE(w.step(), 2);
    QCOMPARE(w.traceView()->step(), 2);
    QTest::keyClick(&w, Qt::Key_Left);
    QCOMPARE(slider->value(), 1);
    QCOMPARE(spy.count(), 5);
  }

  void badFilesShowAnErrorAndKeepTheWindowUsable() {
    ui::MainWindow w;
    w.show();
    loadBoth(w);
    const int steps = w.stepCount();
    const QString badModel = m_dir.filePath("bad.fvm");
    QFile f(badModel);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("definitely not a model");
    f.close();
    QVERIFY(!w.openModel(badModel));
    QVERIFY(w.errorText().contains(badModel));
    QVERIFY(w.errorText().contains("not a Foveal model file"));
    QVERIFY(!w.openImage(QStringLiteral(FOVEAL_SAMPLES_DIR "/../tests/data/corrupt.png")));
    QVERIFY(w.errorText().contains("corrupt.png: cannot decode image"));
    QCOMPARE(w.stepCount(), steps);  // the previous trace is still shown
    w.nextStep();
    QCOMPARE(w.step(), 1);
    QVERIFY(w.openImage(m_image));  // and a good file clears the error
    QVERIFY(w.errorText().isEmpty());
  }

  void imageWidgetMapping_data() {
    QTest::addColumn<QSize>("widget");
    QTest::addColumn<QSize>("image");
    QTest::newRow("wide widget") << QSize(900, 300) << QSize(160, 32);
    QTest::newRow("tall widget") << QSize(400, 600) << QSize(160, 32);
    QTest::newRow("square image") << QSize(700, 400) << QSize(64, 64);
    QTest::newRow("long text line") << QSize(1200, 300) << QSize(416, 32);
  }
  void imageWidgetMapping() {
    QFETCH(QSize, widget);
    QFETCH(QSize, image);
    ui::TraceView view;
    view.resize(widget);
    QImage img(image, QImage::Format_Grayscale8);
    img.fill(0);
    view.setImage(img);
    const QTransform t = view.imageToWidget();
    const QRectF r = t.mapRect(QRectF(QPointF(0, 0), QSizeF(image)));
    // Inside the widget with room for the strip and tokens below; aspect ratio kept.
    QVERIFY(r.left() >= 0 && r.right() <= widget.width());
    QVERIFY(r.top() >= 0 &&
            r.bottom() + ui::TraceView::kStripHeight + ui::TraceView::kTokenHeight <=
                widget.height());
    QVERIFY(qAbs(r.width() / r.height() - double(image.width()) / image.height()) < 1e-9);
    // Fills the limiting dimension (up to the margins) and is centred horizontally.
    QVERIFY(qAbs((r.left() + r.right()) / 2 - widget.width() / 2.0) < 1e-9);
    QVERIFY(r.width() >= widget.width() - 48 - 1e-9 ||
            r.height() >= widget.height() - 48 - ui::TraceView::kStripHeight -
                              ui::TraceView::kTokenHeight - 1e-9);
    // Round trip of a point.
    const QPointF p(image.width() * 0.3, image.height() * 0.7);
    const QPointF back = t.inverted().map(t.map(p));
    QVERIFY(qAbs(back.x() - p.x()) < 1e-9 && qAbs(back.y() - p.y()) < 1e-9);
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
