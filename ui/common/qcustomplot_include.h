#pragma once
// qcustomplot.h spells Qt's `signals:` / `slots` / `emit` keywords, which foveal_config turns off
// and `foreach` (QT_NO_KEYWORDS, because LibTorch uses `slots` as an identifier). Include it only
// through this header, and only in ui translation units, which never see torch.
#ifndef signals
#define signals Q_SIGNALS
#define FOVEAL_QCP_SIGNALS
#endif
#ifndef slots
#define slots Q_SLOTS
#define FOVEAL_QCP_SLOTS
#endif
#ifndef emit
#define emit Q_EMIT
#define FOVEAL_QCP_EMIT
#endif
#ifndef foreach
#define foreach Q_FOREACH
#define FOVEAL_QCP_FOREACH
#endif
#include <qcustomplot.h>
#ifdef FOVEAL_QCP_FOREACH
#undef foreach
#undef FOVEAL_QCP_FOREACH
#endif
#ifdef FOVEAL_QCP_SIGNALS
#undef signals
#undef FOVEAL_QCP_SIGNALS
#endif
#ifdef FOVEAL_QCP_SLOTS
#undef slots
#undef FOVEAL_QCP_SLOTS
#endif
#ifdef FOVEAL_QCP_EMIT
#undef emit
#undef FOVEAL_QCP_EMIT
#endif
