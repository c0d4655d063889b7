// The window's docks and their arrangement: the workspace tabs (Train, Experiments, Explore,
// Inspect, Pretrained) docked together, the Experiment form beside them, the log and the runs
// below. It brings a tab to the front, keeps the form beside the Train tab only while the form
// follows the tab, fits the first start's sizes to the screen, and saves and restores layouts
// (QSettings "layouts/NAME") and the session's own (on close, and at start-up).
#pragma once

#include <QByteArray>
#include <QMargins>
#include <QObject>
#include <QRect>
#include <QSize>
#include <QStringList>

#include <utility>
#include <vector>

class QAction;
class QDockWidget;
class QMainWindow;
class QMenu;
class QWidget;

namespace parrot {

// The workspace tabs, in the order they are docked, with the names `--tab` takes (their docks'
// object names are the name and "Dock": "trainDock").
enum class Tab { Train, Experiments, Explore, Inspect, Pretrained };
inline constexpr std::pair<Tab, const char*> kTabNames[] = {
    {Tab::Train, "train"}, {Tab::Experiments, "experiments"}, {Tab::Explore, "explore"},
    {Tab::Inspect, "inspect"}, {Tab::Pretrained, "pretrained"}};

class DockLayout : public QObject {
    Q_OBJECT
public:
    static constexpr int kLayoutVersion = 2;
    static constexpr QSize kPreferredSize{1920, 1200};  // the Explore tab's two heatmaps want the height
    // Room left for a window manager's frame before the window is shown and its frame is known:
    // a title bar up to 40 px, borders up to 8 px.
    static constexpr QMargins kFrameAllowance{8, 40, 8, 8};
    // A first window shorter than this (a 1366×768 or 1280×800 laptop) starts with the log folded
    // into its status-bar line, which opens it.
    static constexpr int kFoldLogBelow = 900;
    // The first start's geometry (the client area): `preferred`, shrunk to what `available` (a
    // screen's, less its panels) holds with the window's frame around it, and centred there.
    static QRect firstGeometry(const QRect& available, const QSize& preferred, const QMargins& frame);
    static QString tabTitle(Tab tab);  // as the dock's tab shows it: "Train", "Explore", …

    explicit DockLayout(QMainWindow* window);

    // The docks, in the order built: the form (left), then each workspace tab (tabified with the
    // first; the Train tab first), then the log and the runs (tabified, below).
    QDockWidget* addForm(QWidget* form, const QString& title);
    QDockWidget* addWorkspace(QWidget* page, Tab tab);  // added in the order of Tab
    void addBottom(QWidget* log, QWidget* runs);
    // Call once every dock is in: the default layout (View → Reset layout) is this state.
    void finish();

    QDockWidget* formDock() const { return m_form; }
    QDockWidget* logDock() const { return m_log; }
    QDockWidget* runsDock() const { return m_runs; }
    const std::vector<QDockWidget*>& workspace() const { return m_workspace; }
    void showTab(Tab tab);  // brought to the front (and shown, if closed)
    // The tab in front, its panel and title ("Train", "Explore", …).
    QWidget* currentPanel() const;
    QString currentPanelName() const;
    // The workspace tab that holds `w` (its page and title); the tab in front when none does.
    std::pair<QWidget*, QString> panelHolding(const QWidget* w) const;

    bool formFollowsTab() const { return m_formFollowsTab; }
    void setFormFollowsTab(bool on, bool apply = true);
    // View menu: the docks' toggles, the form's follow rule and the layouts.
    void fillViewMenu(QMenu* view);
    // Opens or closes the log and runs together (the status bar's log line).
    void toggleBottom();
    // Height of the bottom docks (`bottom` one of them), the tabs above sharing the rest.
    void setBottomHeight(QDockWidget* bottom, int height);

    void saveLayout(const QString& name);
    bool restoreLayout(const QString& name);
    QStringList savedLayouts() const;
    void resetLayout();
    bool restoreSession();  // false when there is none (or it was saved by another version)
    void saveSession();     // the next start comes back to this window and layout
    // The first show: the first start's sizes unless a session was restored.
    void fitOnFirstShow();

signals:
    void logMessage(const QString& text);
    void errorMessage(const QString& text);
    void restored();  // a layout or the default was put back (the recovery bar is shown again)

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    static QWidget* pageOf(const QDockWidget* dock);  // the panel a workspace dock scrolls
    void fitDocks();   // the first start's sizes: the form, a short log (folded on a short screen), the views
    void followTab();  // the Experiment form beside the Train tab only, while it follows the tab
    // restoreState with the form's follow-the-tab rule of that state; false when it cannot be restored
    bool restoreDocks(const QByteArray& state, bool formFollowsTab);
    void fillLayoutsMenu();
    int separator() const;

    QMainWindow* m_window;
    QDockWidget* m_form = nullptr;
    QDockWidget* m_log = nullptr;
    QDockWidget* m_runs = nullptr;
    std::vector<QDockWidget*> m_workspace;  // Train, Experiments, Explore, Inspect, Pretrained
    QDockWidget* m_current = nullptr;       // the workspace tab in front
    QDockWidget* m_followed = nullptr;      // the tab the form last followed
    bool m_formFollowsTab = true;
    bool m_sessionRestored = false;
    bool m_fitted = false;
    QByteArray m_defaultLayout;
    QMenu* m_layoutsMenu = nullptr;
    QAction* m_followAction = nullptr;
};

}  // namespace parrot
