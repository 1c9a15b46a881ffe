from ari_mem_tui.cli import entry

entry()
