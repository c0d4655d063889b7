#include "ui/window/docklayout.h"

#include "ui/common/appsettings.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QInputDialog>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QMouseEvent>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabBar>

namespace parrot {

QRect DockLayout::firstGeometry(const QRect& available, const QSize& preferred, const QMargins& frame)
{
    const QSize room = available.size().shrunkBy(frame);
    const QSize size = preferred.boundedTo(room);
    // centred in what the screen holds, the frame included
    const QPoint topLeft = available.topLeft() + QPoint(frame.left() + (room.width() - size.width()) / 2,
                                                        frame.top() + (room.height() - size.height()) / 2);
    return QRect(topLeft, size);
}

DockLayout::DockLayout(QMainWindow* window) : QObject(window), m_window(window)
{
    window->setDockNestingEnabled(true);
    window->setTabPosition(Qt::RightDockWidgetArea, QTabWidget::North);
    qApp->installEventFilter(this);  // presses on the docks' tab bar
}

QDockWidget* DockLayout::addForm(QWidget* form, const QString& title)
{
    auto* scroll = new QScrollArea(m_window);
    scroll->setWidget(form);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_form = new QDockWidget(title, m_window);
    m_form->setObjectName("settingsDock");
    m_form->setWidget(scroll);
    m_form->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    m_form->setMinimumWidth(330);
    m_window->addDockWidget(Qt::LeftDockWidgetArea, m_form);
    // Chosen by hand, the form stays as the user put it.
    connect(m_form->toggleViewAction(), &QAction::triggered, this, [this] { setFormFollowsTab(false); });
    connect(m_form, &QDockWidget::topLevelChanged, this, [this](bool floating) {
        if (floating) setFormFollowsTab(false);
    });
    return m_form;
}

QString DockLayout::tabTitle(Tab tab)
{
    switch (tab) {
    case Tab::Train: return tr("Train");
    case Tab::Experiments: return tr("Experiments");
    case Tab::Explore: return tr("Explore");
    case Tab::Inspect: return tr("Inspect");
    case Tab::Pretrained: return tr("Pretrained");
    }
    return {};
}

QDockWidget* DockLayout::addWorkspace(QWidget* page, Tab tab)
{
    auto* dock = new QDockWidget(tabTitle(tab), m_window);
    dock->setObjectName(QString(kTabNames[size_t(tab)].second) + "Dock");
    // A page scrolls in its dock rather than setting the window's minimum size, so the window
    // fits a laptop's screen whatever a page holds, and no page is squeezed under its content.
    auto* scroll = new QScrollArea(dock);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(page);
    dock->setWidget(scroll);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    m_window->addDockWidget(Qt::RightDockWidgetArea, dock);
    if (!m_workspace.empty()) m_window->tabifyDockWidget(m_workspace.front(), dock);
    m_workspace.push_back(dock);
    connect(dock, &QDockWidget::visibilityChanged, this, [this, dock](bool visible) {
        if (!visible) return;
        m_current = dock;
        followTab();
    });
    return dock;
}

void DockLayout::addBottom(QWidget* log, QWidget* runs)
{
    m_log = new QDockWidget(tr("Log"), m_window);
    m_log->setObjectName("logDock");
    m_log->setWidget(log);
    m_window->addDockWidget(Qt::BottomDockWidgetArea, m_log);
    m_runs = new QDockWidget(tr("Runs"), m_window);
    m_runs->setObjectName("runsDock");
    m_runs->setWidget(runs);
    m_window->addDockWidget(Qt::BottomDockWidgetArea, m_runs);
    m_window->tabifyDockWidget(m_log, m_runs);
    m_log->raise();
}

void DockLayout::finish()
{
    m_current = m_workspace.front();
    m_workspace.front()->raise();
    m_defaultLayout = m_window->saveState(kLayoutVersion);
}

void DockLayout::showTab(Tab tab)
{
    // The form placed so that only the tab coming to the front is laid out again: hidden before
    // another tab is raised into its width, shown after the Train tab is (the tab going away is
    // never resized on its way out).
    QDockWidget* d = m_workspace.at(size_t(tab));
    m_current = d;
    const bool formBeside = d == m_workspace.front();
    if (!formBeside) followTab();
    d->show();
    d->raise();
    if (formBeside) followTab();
}

QWidget* DockLayout::currentPanel() const { return m_current ? pageOf(m_current) : nullptr; }

QString DockLayout::currentPanelName() const { return m_current ? m_current->windowTitle() : QString(); }

std::pair<QWidget*, QString> DockLayout::panelHolding(const QWidget* w) const
{
    for (QDockWidget* d : m_workspace)
        if (w && d->widget()->isAncestorOf(w)) return {pageOf(d), d->windowTitle()};
    return {currentPanel(), currentPanelName()};
}

QWidget* DockLayout::pageOf(const QDockWidget* dock)
{
    auto* scroll = qobject_cast<QScrollArea*>(dock->widget());
    return scroll ? scroll->widget() : dock->widget();
}

bool DockLayout::eventFilter(QObject* watched, QEvent* event)
{
    // A workspace tab pressed in the docks' tab bar: the form hidden before the switch, so that
    // the tab is laid out once, at its width (as showTab does; the Train tab shows the
    // form after it is raised, when the tab's visibility changes).
    if (event->type() != QEvent::MouseButtonPress || watched->parent() != m_window) return false;
    if (auto* bar = qobject_cast<QTabBar*>(watched)) {
        const int tab = bar->tabAt(static_cast<QMouseEvent*>(event)->position().toPoint());
        for (QDockWidget* d : m_workspace)
            if (tab >= 0 && bar->tabText(tab) == d->windowTitle() && d != m_current && d != m_workspace.front() && !d->isFloating()) {
                m_current = d;
                followTab();
            }
    }
    return false;
}

void DockLayout::fillViewMenu(QMenu* view)
{
    for (QDockWidget* d : m_workspace) view->addAction(d->toggleViewAction());
    view->addSeparator();
    for (QDockWidget* d : {m_form, m_log, m_runs}) view->addAction(d->toggleViewAction());
    m_followAction = view->addAction(tr("Experiment form &follows the tab"), this, [this](bool on) { setFormFollowsTab(on); });
    m_followAction->setObjectName("followTabAction");
    m_followAction->setCheckable(true);
    m_followAction->setChecked(m_formFollowsTab);
    m_followAction->setToolTip(tr("Show the Experiment form beside the Train tab only, and give the other tabs its width"));
    view->addSeparator();
    view->addAction(tr("&Save layout as..."), this, [this] {
        bool ok = false;
        const QString name = QInputDialog::getText(m_window, tr("Save layout"), tr("Name of this layout:"), QLineEdit::Normal,
                                                   tr("My layout"), &ok);
        if (ok && !name.trimmed().isEmpty()) saveLayout(name.trimmed());
    });
    m_layoutsMenu = view->addMenu(tr("&Restore layout"));
    connect(m_layoutsMenu, &QMenu::aboutToShow, this, &DockLayout::fillLayoutsMenu);
    view->addAction(tr("Reset &layout"), this, [this] { resetLayout(); });
}

void DockLayout::fillLayoutsMenu()
{
    m_layoutsMenu->clear();
    const QStringList names = savedLayouts();
    if (names.isEmpty()) m_layoutsMenu->addAction(tr("(no saved layouts: View → Save layout as…)"))->setEnabled(false);
    for (const QString& name : names) m_layoutsMenu->addAction(name, this, [this, name] { restoreLayout(name); });
    if (!names.isEmpty()) {
        m_layoutsMenu->addSeparator();
        QMenu* remove = m_layoutsMenu->addMenu(tr("Delete"));
        for (const QString& name : names) remove->addAction(name, this, [name] { QSettings().remove("layouts/" + name); });
    }
}

void DockLayout::toggleBottom()
{
    const bool open = !m_log->isVisible() || m_log->visibleRegion().isEmpty();
    m_log->setVisible(open);
    m_runs->setVisible(open);
    if (open) m_log->raise();
}

void DockLayout::saveLayout(const QString& givenName)
{
    QString name = givenName;
    name.replace('/', '-').replace('\\', '-');  // a slash would make a settings group of its own
    const QString error = writeSettings({{QString("layouts/%1/state").arg(name), m_window->saveState(kLayoutVersion)},
                                         {QString("layouts/%1/geometry").arg(name), m_window->saveGeometry()},
                                         {QString("layouts/%1/formFollowsTab").arg(name), m_formFollowsTab}});
    if (!error.isEmpty()) {
        emit errorMessage(tr("The layout \"%1\" was not saved. %2; the layouts saved before are kept.").arg(name, error));
        return;
    }
    emit logMessage(tr("Layout \"%1\" saved (View → Restore layout).").arg(name));
}

QStringList DockLayout::savedLayouts() const
{
    QSettings s;
    s.beginGroup("layouts");
    return s.childGroups();
}

bool DockLayout::restoreLayout(const QString& name)
{
    QSettings s;
    const QByteArray state = s.value(QString("layouts/%1/state").arg(name)).toByteArray();
    // a layout saved without the flag keeps the form where it was saved
    if (!restoreDocks(state, s.value(QString("layouts/%1/formFollowsTab").arg(name), false).toBool())) {
        emit errorMessage(tr("The layout \"%1\" cannot be restored (it was saved by another version, or removed).").arg(name));
        return false;
    }
    m_window->restoreGeometry(s.value(QString("layouts/%1/geometry").arg(name)).toByteArray());
    emit restored();
    emit logMessage(tr("Layout \"%1\" restored.").arg(name));
    return true;
}

void DockLayout::resetLayout()
{
    m_window->restoreState(m_defaultLayout, kLayoutVersion);
    for (QDockWidget* d : m_window->findChildren<QDockWidget*>()) d->show();
    emit restored();
    setFormFollowsTab(true, false);
    fitDocks();
    showTab(Tab::Train);
}

bool DockLayout::restoreSession()
{
    QSettings s;
    const QByteArray state = s.value("window/state").toByteArray();
    if (state.isEmpty()) return false;
    m_window->restoreGeometry(s.value("window/geometry").toByteArray());
    m_sessionRestored = restoreDocks(state, s.value("window/formFollowsTab", false).toBool());
    emit restored();
    return m_sessionRestored;
}

void DockLayout::saveSession()
{
    // a full disk keeps the last one saved
    writeSettings({{"window/geometry", m_window->saveGeometry()},
                   {"window/state", m_window->saveState(kLayoutVersion)},
                   {"window/formFollowsTab", m_formFollowsTab}});
}

bool DockLayout::restoreDocks(const QByteArray& state, bool formFollowsTab)
{
    // the form's rule set before the docks move, so that the tabs shown while they do are not
    // followed; kept as it was when the state cannot be restored
    const bool before = m_formFollowsTab;
    setFormFollowsTab(formFollowsTab, false);
    if (state.isEmpty() || !m_window->restoreState(state, kLayoutVersion)) {
        setFormFollowsTab(before, false);
        return false;
    }
    m_followed = m_current;  // as restored
    return true;
}

void DockLayout::fitOnFirstShow()
{
    if (m_fitted) return;
    m_fitted = true;
    if (!m_sessionRestored) fitDocks();
}

int DockLayout::separator() const
{
    return m_window->style()->pixelMetric(QStyle::PM_DockWidgetSeparatorExtent, nullptr, m_window);
}

void DockLayout::fitDocks()
{
    // The first layout: the form at its width, a short log, the rest for the views. On a short
    // screen (a laptop's 768 lines) the log folds into its line in the status bar, so that each
    // tab's main view is whole.
    const int width = m_window->width();
    // wide enough for the form's rows beside its scroll bar (their spin boxes whole), at most 400
    const int formNeeds = pageOf(m_form)->minimumSizeHint().width() + m_window->style()->pixelMetric(QStyle::PM_ScrollBarExtent) +
                          2 * m_form->widget()->contentsMargins().left() + 4;
    const int form = std::clamp(std::max(width / 5, formNeeds), m_form->minimumWidth(), 400);
    const bool shortWindow = m_window->height() < kFoldLogBelow;
    m_log->setVisible(!shortWindow);
    m_runs->setVisible(!shortWindow);
    if (!shortWindow) {
        m_log->raise();
        setBottomHeight(m_log, std::clamp((m_window->statusBar()->y() - m_current->y()) / 8, 110, 160));
    }
    if (m_form->isVisible()) m_window->resizeDocks({m_form, m_current}, {form, width - form - separator()}, Qt::Horizontal);
}

void DockLayout::setFormFollowsTab(bool on, bool apply)
{
    m_formFollowsTab = on;
    m_followed = nullptr;
    if (m_followAction) m_followAction->setChecked(on);
    if (apply) followTab();
}

void DockLayout::followTab()
{
    // The form applies to the Train tab only (Experiments has its own presets; Explore, Inspect
    // and Pretrained show models and files): elsewhere its width goes to the tab.
    // Only when the tab in front changes: the form shown or hidden relays the docks out, which
    // tells the same tab again that it is visible.
    if (!m_formFollowsTab || !m_form || m_form->isFloating() || !m_current) return;
    if (m_followed == m_current) return;
    m_followed = m_current;
    const bool wanted = m_current == m_workspace.front();
    if (m_form->isHidden() == wanted) m_form->setVisible(wanted);  // (before the window is shown too)
    m_form->toggleViewAction()->setChecked(wanted);  // View → Experiment says what is shown
}

void DockLayout::setBottomHeight(QDockWidget* bottom, int height)
{
    // Without a central widget the dock areas share the height in proportion to their sizes, so
    // the bottom one and those above are sized together to add up to the height there is (the
    // bottom one alone is undone by that sharing). The form is hidden beside most tabs.
    const auto docked = [](const QDockWidget* d) { return d && d->isVisible() && !d->isFloating(); };
    if (!docked(bottom) || !docked(m_current)) return;  // a layout of the user's own
    const int above = m_window->statusBar()->y() - m_current->y() - height - separator();
    if (above <= 0) return;
    if (docked(m_form)) m_window->resizeDocks({m_form, m_current, bottom}, {above, above, height}, Qt::Vertical);
    else m_window->resizeDocks({m_current, bottom}, {above, height}, Qt::Vertical);
}

}  // namespace parrot
