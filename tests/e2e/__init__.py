"""End-to-end tests that drive the real `sylk` app in a terminal (tmux), as a user does."""
