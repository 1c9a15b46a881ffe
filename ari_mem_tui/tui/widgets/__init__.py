"""Widgets of the TUI: the run tree, the detail panes and the status bar."""
