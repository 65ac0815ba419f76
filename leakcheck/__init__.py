"""leakcheck: find train/eval leakage in LLM fine-tuning and RL datasets, field by field.

>>> import leakcheck
>>> cfg = leakcheck.ScanConfig(levels=("exact", "normalized"))
>>> # result = leakcheck.scan("train.parquet", "eval.parquet", cfg)
"""

__version__ = "0.1.0"

from .config import ContainedConfig, Fields, NearConfig, Policy, ScanConfig  # noqa: E402
from .errors import InputError, LeakcheckError, OutputError, RecordError, UsageError  # noqa: E402
from .records import Record  # noqa: E402
from .result import ChanceMatch, EvalDuplicate, Finding, InputInfo, ScanResult  # noqa: E402
from .scan import load_records, scan  # noqa: E402
from .gate import exit_code  # noqa: E402
from .config import Limit, load_config  # noqa: E402
from .baseline import AllowEntry, Baseline, apply_allowlist, apply_baseline, load_allowlist, load_baseline  # noqa: E402

__all__ = [
    "__version__", "scan", "load_records", "exit_code",
    "ScanConfig", "Fields", "Policy", "Limit", "NearConfig", "ContainedConfig", "load_config",
    "Baseline", "load_baseline", "apply_baseline", "AllowEntry", "load_allowlist", "apply_allowlist",
    "ScanResult", "Finding", "ChanceMatch", "EvalDuplicate", "InputInfo", "Record",
    "LeakcheckError", "InputError", "UsageError", "RecordError", "OutputError",
]
