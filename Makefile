# sensorbudget — every target creates/uses .venv itself.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
OUT     := demo-out
AIR     := data/air_quality_uci/AirQualityUCI.csv
AIR_OPTS := --sep ';' --decimal , --na-value -200 --drop-missing \
            --target 'CO(GT)' --target 'C6H6(GT)' --target 'NOx(GT)' --target 'NO2(GT)' \
            --ignore Date --ignore Time --ignore 'NMHC(GT)'

.PHONY: venv demo test bench deps-embedded clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	@echo "== 1. select 4 of the 8 Air Quality device channels for 4 pollutant targets"
	$(BIN)/sensorbudget train $(AIR) $(AIR_OPTS) --budget 4 -o $(OUT)/air_bundle
	@echo "== 2. the bundle's selection path"
	$(BIN)/sensorbudget info $(OUT)/air_bundle

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_selection.py

# Cross toolchains and emulators used by firmware_gen / device_sim tests (Debian packages).
deps-embedded:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    gcc make python3-venv gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi \
	    qemu-system-arm gcc-avr avr-libc simavr libsimavr-dev

clean:
	rm -rf $(OUT) build .pytest_cache
