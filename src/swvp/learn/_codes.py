"""Integer codes that carry the learner's choices into compiled kernels (resolved once at the API edge).

``rule_codes`` (int64) and ``rule_params`` (float64) arrays hold an update rule; ``STAT_*`` index the per-epoch
statistics array a kernel fills.
"""

# update rule (rule_codes[U_RULE])
RULE_FULL = 0  # Collins: ΔΦ(x, y, z)
RULE_WV = 1  # SWVP: Σ_J γ_J ΔΦ(x, y, m^J)

# rule_codes slots
U_RULE = 0
U_JJ = 1  # JJ_SINGLE / JJ_FULL / JJ_EXPLICIT / JJ_SPANS / JJ_WINDOW / JJ_INFERENCE
U_SCHEME = 2  # GAMMA_WM / GAMMA_WMR / GAMMA_LOSS / GAMMA_PA
U_MODE = 3  # MODE_AGGRESSIVE / MODE_BALANCED
U_WMR_N = 4  # WMR_N_SET / WMR_N_JJ
U_WMR_RANKS = 5  # RANKS_DEFAULT / RANKS_SWVM
U_INCLUDE_EQUAL = 6  # 0 / 1 (code-compatible: keep positions where prediction equals gold, margin 0)
U_ZERO = 7  # ZERO_UNIFORM / ZERO_BACKOFF (all margins in S within eps of 0)
U_EMPTY = 8  # EMPTY_BACKOFF / EMPTY_PASSIVE (I^v empty)
U_COND2 = 9  # 0 / 1 enforce condition (2)
U_JJ_PARAM = 10  # JJ_WINDOW: the window width W; JJ_INFERENCE: the neighbourhood radius r
N_RULE_CODES = 11

# rule_params slots
F_BETA = 0
F_EPS = 1
N_RULE_PARAMS = 2

JJ_SINGLE = 0
JJ_FULL = 1
JJ_EXPLICIT = 2
# JJ sets computed per example at update time (learn/_swvp.py), from the positions where prediction ≠ reference
JJ_SPANS = 3  # one set per group of errors (chains: maximal runs; trees: a wrong word's predicted subtree)
JJ_WINDOW = 4  # every window of W consecutive positions that holds an error
JJ_INFERENCE = 5  # per error group, the best output agreeing with the reference outside its neighbourhood

GAMMA_WM = 0
GAMMA_WMR = 1
GAMMA_LOSS = 2  # γ_J ∝ Hamming(m^J, y) · |margin_J|^β
GAMMA_PA = 3  # γ = the normalised dual of the k-constraint passive-aggressive problem (learn/_swvp.py pa_gamma)

MODE_AGGRESSIVE = 0
MODE_BALANCED = 1

WMR_N_SET = 0
WMR_N_JJ = 1

RANKS_DEFAULT = 0
RANKS_SWVM = 1

ZERO_UNIFORM = 0
ZERO_BACKOFF = 1

EMPTY_BACKOFF = 0
EMPTY_PASSIVE = 1

# statistics slots (float64 array filled by an epoch kernel)
STAT_MISTAKES = 0  # examples whose prediction differed from gold
STAT_UPDATES = 1  # updates made
STAT_BACKOFFS = 2  # SWVP updates that fell back to the CSP update
STAT_IV_RATIO_SUM = 3  # Σ |I^v| / |S_all| over SWVP updates
STAT_IV_RATIO_N = 4
STAT_COND2_FAIL = 5  # balanced updates whose γ breaks condition (2) (before any repair)
STAT_COND2_CHECKED = 6
STAT_TOKENS_WRONG = 7  # online (pre-update) token errors
STAT_TOKENS = 8
STAT_INVALID = 9  # updates with w·ΔΦ > eps before the update (ALGORITHMS.md §2.4)
STAT_LOG_OVERFLOW = 10
STAT_SKIPPED = 11  # examples skipped: reference unreachable (latent perceptron, ALGORITHMS.md §7)
# raw diagnostics of SWVP updates (read by tests and experiments from the stats array; not in EpochStats)
STAT_COND1_FAIL = 12  # γ-weighted updates whose γ is not a distribution (Σγ ≠ 1 beyond 1e-9, or some γ < 0)
STAT_IV_SUM = 13  # Σ |I^v| over SWVP updates
STAT_I_SUM = 14  # Σ |I| over SWVP updates
STAT_EMPTY_IV = 15  # SWVP updates whose I^v was empty
STAT_SEARCHED = 16  # JJ_INFERENCE: mixed assignments taken from the constrained search (the rest: projections)
N_STATS = 17

# greedy/beam search statistics slots (float64 array ``search_stats`` filled by the engine under Beam/Greedy)
B_GOLD_FELL = 0  # examples whose gold prefix fell off the beam at some step of the (first) search
B_POS_SUM = 1  # Σ (i*+1)/n over updates (mean update position = B_POS_SUM / updates)
B_NONVIOL = 2  # debug: updates whose pair is not a violation (t_i* = g_i*, or V_i* < −eps from the trace or
# recomputed from the score arrays); must stay 0 for every selector but standard
B_FULL = 3  # updates on complete outputs (i* = n−1)
B_SEARCHES = 4  # beam searches run (LaSO restarts included)
B_MISMATCH = 5  # debug: |V_i* (trace) + w·ΔΦ(g, t) (recomputed)| beyond rounding; must stay 0
B_NO_UPDATE = 6  # examples with a wrong output but no update (the selector found no step)
N_BSTATS = 7
