"""Issue 24 items 15 and 18: estimators whose learner mixes on a Dask cluster pickle, clone (``GridSearchCV``) and save
without the cluster (no live client, no scheduler address in the model file; a loaded model trains on threads); a
worker without swvp is one error saying what to install."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from problems import noisy_problem
from swvp import ParameterMixing, Perceptron, SequenceTagger
from swvp.exceptions import ClusterError
from swvp.learn.mixing import _ShardExecutor
from swvp.persistence import load_model
from test_estimator_contract import tag_language

distributed = pytest.importorskip("distributed")
sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold  # noqa: E402

#: a Dask preload that makes a worker unable to import swvp, as a worker where it is not installed
BLOCK_SWVP = '''
import sys


class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "swvp" or name.startswith("swvp."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Block())
'''


def _cluster(**kw):
    return distributed.LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None, **kw)


def test_a_dask_mixing_estimator_pickles_clones_searches_and_saves_without_its_cluster(tmp_path):
    X, Y = tag_language(40, 3)
    path = tmp_path / "m.npz"
    with _cluster(processes=False) as cluster, distributed.Client(cluster) as client:
        address = cluster.scheduler_address
        tagger = SequenceTagger(rare_threshold=1, learner=Perceptron(epochs=2, mixing=ParameterMixing(
            shards=2, scheduler=client)))
        # clone (what GridSearchCV does) shares the live client; a pickle carries its address
        assert clone(tagger).learner.mixing.scheduler is client
        assert pickle.loads(pickle.dumps(tagger)).learner.mixing.scheduler == address
        search = GridSearchCV(tagger, {"learner__epochs": [1, 2]}, cv=KFold(2)).fit(X, Y)
        assert search.best_estimator_.learner.mixing.scheduler is client
        tagger.fit(X, Y)
        assert pickle.loads(pickle.dumps(tagger)).predict(X) == tagger.predict(X)
        tagger.save(path)
    meta, _ = load_model(path)
    header = json.dumps(meta)
    assert address not in header and "tcp://" not in header
    assert meta["params"]["learner"]["mixing"]["scheduler"] == meta["settings"]["mixing"]["scheduler"] == "dask"
    # the cluster is gone: the loaded model trains on threads, to the weights the cluster gave
    loaded = SequenceTagger.load(path)
    assert loaded.learner.mixing == ParameterMixing(shards=2, scheduler="threads")
    assert np.array_equal(loaded.fit(X, Y).coef_, tagger.coef_)


def test_a_file_holding_an_old_scheduler_address_loads_on_threads():
    assert ParameterMixing.from_params({"shards": 3, "mu": "uniform", "scheduler": "tcp://10.0.0.5:8786"}) == \
        ParameterMixing(shards=3, mu="uniform", scheduler="threads")
    assert ParameterMixing(shards=3, scheduler="tcp://10.0.0.5:8786").params()["scheduler"] == "dask"
    assert ParameterMixing.from_params(ParameterMixing(scheduler="sync").params()).scheduler == "sync"


def test_a_worker_without_swvp_is_one_error_saying_what_to_install(tmp_path):
    preload = tmp_path / "block_swvp.py"
    preload.write_text(BLOCK_SWVP, encoding="utf-8")
    problem = noisy_problem(9, n_sent=12, max_len=5, hmm=True)
    with _cluster(processes=True, preload=[str(preload)]) as cluster, distributed.Client(cluster) as client:
        with pytest.raises(ClusterError, match=r"^a Dask worker cannot import 'swvp': install swvp \S+ on every "
                                               r"worker \(pip install 'swvp\[dask\]'"):
            Perceptron(epochs=1, mixing=ParameterMixing(shards=2, scheduler=client)).train(problem)
        with pytest.raises(ClusterError, match="cannot import 'swvp'"):  # the scheduler given by its address
            _ShardExecutor(cluster.scheduler_address, 2, problem)
