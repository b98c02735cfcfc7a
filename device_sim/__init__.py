"""Replay recorded sensor streams through generated firmware and measure the prediction cost."""
