"""The episode cache of a C-ARC build: each pool episode is generated once, not once per config,
and the bytes are those of a build without the cache, whatever happens to the cache's files."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from cogen.carc.episodes import EpisodeSampler
from cogen.families.carc import episode_cache as cache_module
from cogen.families.carc.build import GENERATOR_VERSION, CarcBuilder, PoolJob
from cogen.families.carc.episode_cache import SWITCH, CachedEpisodes, cache_folder, chunks
from cogen.folder import scratch_path
from cogen.pipeline import build
from cogen.pipeline.executors import SerialExecutor
from cogen.pipeline.verify import failed, verify
from cogen.specs import load_spec

SCALE = 0.002  # 200 episodes
EPISODES = 200
SHARD = 64  # key tasks of 64 episodes: cache files 0-64, 64-128, 128-192, 192-200


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("data/**/*.parquet"))}


@pytest.fixture
def generated(monkeypatch) -> list[int]:
    """Counts the episodes the sampler generates in this process (a list: one total per build)."""
    counts = [0]
    original = EpisodeSampler.generate

    def counting(self, indices, retries=None):
        batch = original(self, indices, retries)
        counts[-1] += len(batch)
        return batch

    monkeypatch.setattr(EpisodeSampler, "generate", counting)
    return counts


@pytest.fixture(scope="module")
def uncached(tmp_path_factory):
    """The same build without the cache: every config generates its episodes again (today's bytes)."""
    out = tmp_path_factory.mktemp("uncached")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SWITCH, "0")
        build("carc", out, scale=SCALE, workers=1, rows_per_shard=SHARD)
    return out


@pytest.mark.slow
def test_cached_build_generates_each_episode_once_and_writes_the_same_bytes(uncached, tmp_path, generated):
    build("carc", tmp_path / "cached", scale=SCALE, workers=1, rows_per_shard=SHARD)
    cached = generated[-1]
    generated.append(0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SWITCH, "0")
        build("carc", tmp_path / "again", scale=SCALE, workers=1, rows_per_shard=SHARD)
    assert digests(tmp_path / "cached") == digests(uncached) == digests(tmp_path / "again")
    assert len(digests(uncached)) > 9  # every pool config and the static variant
    # the key pass's 200, the pilot's 8, and the few dedup regenerations (each written by 9 configs)
    assert EPISODES <= cached < 1.5 * EPISODES, cached
    assert generated[-1] > 9 * EPISODES  # without the cache: the key pass, then once per pool config
    assert not scratch_path(tmp_path / "cached").exists()


@pytest.mark.slow
def test_two_workers_share_the_cache_and_write_the_same_bytes(uncached, tmp_path, pooled):
    build("carc", tmp_path / "two", scale=SCALE, workers=2, rows_per_shard=SHARD)
    assert digests(tmp_path / "two") == digests(uncached)
    assert not scratch_path(tmp_path / "two").exists()


def test_lost_or_damaged_cache_files_are_generated_again(uncached, tmp_path, generated, monkeypatch):
    damaged = []
    original = CachedEpisodes.__init__

    def damage_then_read(self, sampler, folder):
        if not damaged:  # the first shard writer: the key pass has written every file
            files = sorted(Path(folder).iterdir())
            assert len(files) == 4
            shutil.rmtree(files[0])
            (files[1] / "grids.npy").write_bytes(b"not an npy file")
            meta = files[2] / "meta.npy"
            meta.write_bytes(meta.read_bytes()[:1000])
            damaged.extend(files[:3])
        original(self, sampler, folder)

    monkeypatch.setattr(CachedEpisodes, "__init__", damage_then_read)
    build("carc", tmp_path / "damaged", scale=SCALE, workers=1, rows_per_shard=SHARD)
    assert damaged
    assert digests(tmp_path / "damaged") == digests(uncached)
    assert generated[-1] > 3 * EPISODES  # 192 of the 200 episodes were generated again by each pool config
    assert not scratch_path(tmp_path / "damaged").exists()


def test_files_left_by_a_killed_build_are_never_read(uncached, tmp_path):
    out = tmp_path / "resumed"
    setting = load_spec("carc").scaled(SCALE)
    folder = cache_folder(scratch_path(out), CarcBuilder(setting).sampler, GENERATOR_VERSION)
    wrong = EpisodeSampler.from_setting(setting.with_seed(setting.seed + 1))
    for start, stop in [(0, SHARD), (SHARD, 2 * SHARD)]:  # readable files of the right names, other episodes
        cache_module.save_chunk(folder, wrong.generate(np.arange(start, stop)))
    build("carc", out, scale=SCALE, workers=1, rows_per_shard=SHARD)
    assert digests(out) == digests(uncached)
    assert not scratch_path(out).exists()


def test_a_failed_build_leaves_no_cache(tmp_path, monkeypatch):
    def fail(self, indices, retries):
        raise RuntimeError("writer failed")

    monkeypatch.setattr(CachedEpisodes, "generate", fail)
    with pytest.raises(RuntimeError, match="writer failed"):
        build("carc", tmp_path / "failed", scale=SCALE, workers=1, rows_per_shard=SHARD)
    assert not scratch_path(tmp_path / "failed").exists()


def test_verify_regenerates_without_the_cache(uncached, monkeypatch):
    def refuse(self, indices, retries):
        raise AssertionError("verify read the build's episode cache")

    monkeypatch.setattr(CachedEpisodes, "generate", refuse)
    checks = verify(uncached, shards_per_config=1)
    assert not failed(checks), failed(checks)


def test_a_url_build_whose_workers_may_not_share_the_disk_uses_no_cache(uncached, tmp_path, monkeypatch):
    fsspec = pytest.importorskip("fsspec")

    def refuse(self, sampler, folder):
        raise AssertionError("a URL build read an episode cache")

    monkeypatch.setattr(CachedEpisodes, "__init__", refuse)
    url = f"memory://cogen-carc-{tmp_path.name}/out"
    build("carc", url, scale=SCALE, workers=1, rows_per_shard=SHARD, state_dir=tmp_path / "state")
    fs = fsspec.filesystem("memory")
    root = fs._strip_protocol(url)
    remote = {path[len(root) + 1:]: hashlib.sha256(fs.cat_file(path)).hexdigest()
              for path in sorted(fs.find(f"{root}/data")) if path.endswith(".parquet")}
    assert remote == digests(uncached)
    assert not scratch_path(tmp_path / "state").exists()


def test_no_scratch_or_the_switch_means_no_cache(tmp_path, monkeypatch):
    builder = CarcBuilder(load_spec("carc").scaled(SCALE), rows_per_shard=SHARD)
    jobs = [t.payload for plan in builder.prepare(SerialExecutor()) for t in plan.tasks]
    assert all(job.cache is None for job in jobs if isinstance(job, PoolJob))
    monkeypatch.setenv(SWITCH, "0")
    assert cache_folder(tmp_path, builder.sampler, 2) is None


def test_the_cache_folder_is_named_by_what_decides_the_episodes(tmp_path):
    setting = load_spec("carc")
    sampler = EpisodeSampler.from_setting(setting)
    other = EpisodeSampler.from_setting(setting.with_seed(setting.seed + 1))
    names = {cache_folder(tmp_path, s, v) for s, v in ((sampler, 2), (other, 2), (sampler, 3))}
    assert len(names) == 3
    assert cache_folder(tmp_path, EpisodeSampler.from_setting(load_spec("carc")), 2) == \
        cache_folder(tmp_path, sampler, 2)


def test_reader_gives_what_the_sampler_gives_for_any_order_and_retries(tmp_path):
    sampler = EpisodeSampler.from_setting(load_spec("carc"))
    folder = str(tmp_path / "cache")
    for start, stop in chunks(0, 50):
        cache_module.save_chunk(folder, sampler.generate(np.arange(start, stop)))
    assert list(chunks(1990, 4010)) == [(1990, 2000), (2000, 4000), (4000, 4010)]
    mixed = (np.array([45, 3, 60, 3, 49, 0, 7]), np.array([0, 0, 0, 1, 0, 0, 2]))  # unsorted, repeated, uncached
    reader = CachedEpisodes(sampler, folder)
    for indices, retries in [mixed, (np.arange(10, 40), np.zeros(30, np.int64)),
                             (np.array([2, 5, 9]), np.zeros(3, np.int64))]:  # mixed; consecutive; one file
        got, want = reader.generate(indices, retries), sampler.generate(indices, retries)
        for name in ("indices", "retries", *cache_module.FIELDS):
            assert np.array_equal(getattr(got, name), getattr(want, name)), name
            assert getattr(got, name).dtype == getattr(want, name).dtype, name
