"""Results → text for people and JSON for scripts: Rich, never Textual; one cleaner for all."""
