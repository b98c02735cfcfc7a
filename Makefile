# sensorbudget — every target creates/uses .venv itself.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
OUT     := demo-out
AIR     := data/air_quality_uci/AirQualityUCI.csv

.PHONY: venv demo test fuzz-smoke bench deps-embedded clean golden

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	@echo "== 1. recordings -> candidate features (Air Quality hourly stream, 8 channels, sensors.toml)"
	$(BIN)/sensorbudget features $(AIR) --sensors examples/air_quality.sensors.toml -o $(OUT)/air_features.npz
	@echo "== 2. greedy RLS under a budget: at most 8 extractors and 30 EUR of sensors (lambda by LOO)"
	$(BIN)/sensorbudget train $(OUT)/air_features.npz --budget 8 --max-cost 30 \
	    --plot $(OUT)/pareto.png -o $(OUT)/air_bundle
	@echo "== 3. the bundle's selection path"
	$(BIN)/sensorbudget info $(OUT)/air_bundle
	@echo "== 4. export: ONNX (all candidate inputs) and a Q15 C header; check both"
	$(BIN)/sensorbudget export onnx $(OUT)/air_bundle -o $(OUT)/model.onnx
	$(BIN)/sensorbudget export c-header $(OUT)/air_bundle -o $(OUT)/model.h --numeric q15
	$(BIN)/sensorbudget info $(OUT)/model.onnx
	$(BIN)/python examples/check_export.py $(OUT)/air_bundle --onnx $(OUT)/model.onnx --header $(OUT)/model.h
	@echo "== 5. firmware: streaming extractors + protocol main loop, built for the host (and Cortex-M4F if installed)"
	$(BIN)/sensorbudget firmware $(OUT)/air_bundle --target host --numeric float32 -o $(OUT)/fw_host --build
	@if command -v arm-none-eabi-gcc >/dev/null; then \
	    $(BIN)/sensorbudget firmware $(OUT)/air_bundle --target cortex-m4f --numeric float32 -o $(OUT)/fw_m4f --build; \
	else echo "(arm-none-eabi-gcc not installed: run 'make deps-embedded' for Cortex-M and AVR builds)"; fi
	@echo "== 6. replay the recorded stream through the firmware on the best available backend (Q15)"
	$(BIN)/sensorbudget simulate $(OUT)/air_bundle --recordings $(AIR) --backend best --numeric q15 --report $(OUT)/sim
	@echo "== 7. the all-sensor model against the budgeted one"
	$(BIN)/sensorbudget train $(OUT)/air_features.npz --budget 30 --lam 1 -o $(OUT)/air_full
	$(BIN)/sensorbudget simulate $(OUT)/air_full --recordings $(AIR) --backend best --numeric q15 --report $(OUT)/sim_full
	$(BIN)/sensorbudget compare $(OUT)/sim_full $(OUT)/sim
	@echo "== 8. one interactive HTML report: both designs step by step and their simulations"
	$(BIN)/sensorbudget report $(OUT)/air_bundle $(OUT)/air_full $(OUT)/sim $(OUT)/sim_full \
	    -o $(OUT)/report.html
	@echo "demo done: open $(OUT)/report.html (and $(OUT)/sim*/summary.md)"

test: $(STAMP)
	$(BIN)/python -m pytest -q
	$(MAKE) fuzz-smoke

# Regenerate the golden C files (tests/golden/files) after reviewing the emitter's diff.
golden: $(STAMP)
	$(BIN)/python -m tests.golden.cases

# Every fuzz target briefly (about a minute); long runs: see fuzz/README.md.
fuzz-smoke: $(STAMP)
	$(BIN)/python -m fuzz.smoke

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_selection.py
	$(BIN)/python benchmarks/bench_replay.py --seconds 600
	$(BIN)/python benchmarks/bench_issue28.py --per-extractor --batched-push
	$(BIN)/python benchmarks/bench_multirate.py
	$(BIN)/python benchmarks/bench_fft_q15_option.py

# Cross toolchains and emulators used by firmware_gen / device_sim tests, and Chromium with its
# driver for the browser test of the HTML report (Debian packages).
deps-embedded:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    gcc make python3-venv gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi \
	    qemu-system-arm qemu-system-misc gcc-avr avr-libc simavr libsimavr-dev avrdude \
	    cmake arduino-builder arduino-core-avr \
	    gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf picolibc-riscv64-unknown-elf \
	    clang libclang-rt-14-dev chromium chromium-driver

clean:
	rm -rf $(OUT) build .pytest_cache
