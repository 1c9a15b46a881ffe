"""Screens and modal dialogs of the TUI: help, entry, compare, filter."""
