"""Training in blocks: the plan (``w2v.cluster.blocks``), the pairs and their chunks
(``w2v.cluster.pairs``), their wire format (``w2v.cluster.paircodec``) and the chunk
kernel (``w2v.engine.chunks``) against the numpy reference."""

import itertools

import numpy as np
import pytest
from reference import ALIAS_ONE, alias_probabilities, draw_noise, lcg, logistic_units

from w2v.cluster.blockmachine import BlockMachine, Schedule, Text, sweep_pairs
from w2v.cluster.blockrun import Start, gather, sent_total, train_blocks
from w2v.cluster.blocks import (
    block_alphas,
    block_keys,
    block_pairs,
    block_right,
    handoff_bytes,
    left_partitions,
    right_members,
    right_noise,
)
from w2v.cluster.paircodec import decode_frames, decode_keys, encode_frames, encode_keys, varint_bytes
from w2v.cluster.pairs import block_chunks, chunk_starts, machine_frames, window_pairs
from w2v.config import TrainConfig
from w2v.corpus.vocab import Vocab
from w2v.engine.chunks import ChunkNoise, Chunks, chunk_settings, train_chunks
from w2v.engine.weights import Tables, path_tables

D = 8


def zipf_vocab(size: int) -> Vocab:
    counts = (100_000 / np.arange(1, size + 1)).astype(np.int64) + 1
    return Vocab([b"w%d" % i for i in range(size)], counts)


def test_a_frame_decodes_to_its_keys_and_small_gaps_take_a_byte():
    keys = np.array([0, 0, 5, 127, 255, 16_383, 16_384, 2**40, 2**40, 2**62], np.int64)
    frame = encode_keys(keys)
    assert len(frame) == varint_bytes(keys)
    np.testing.assert_array_equal(decode_keys(frame, len(keys)), keys)
    repeated = np.full(1000, 77, np.int64)
    assert len(encode_keys(repeated)) == 1000  # the first gap (77) and 999 zeros: a byte each


def test_frames_laid_end_to_end_decode_each_to_its_keys():
    rng = np.random.default_rng(3)
    runs = [np.sort(rng.integers(0, 10**n, size)) for n, size in ((3, 50), (9, 0), (6, 200), (12, 1))]
    keys = np.concatenate(runs).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum([len(r) for r in runs])]).astype(np.int64)
    data, at = encode_frames(keys, starts)
    assert at[1] == at[2]  # the empty frame takes no byte
    np.testing.assert_array_equal(decode_frames(data, at, starts), keys)


@pytest.mark.parametrize("cut", [1, -1])
def test_a_damaged_frame_is_refused(cut):
    frame = encode_keys(np.array([3, 300, 70_000], np.int64))
    damaged = frame[:-1] if cut == 1 else np.concatenate([frame, np.zeros(1, np.uint8)])
    with pytest.raises(ValueError, match="pair frame"):
        decode_keys(damaged, 3)


def reference_pairs(tokens, seed, keep_prob, window):
    """The pairs the batch kernel trains (reference.train_batch's sentence loop)."""
    r, i, pairs = int(seed), 0, []
    while i < len(tokens):
        sentence = []
        while i < len(tokens) and tokens[i] >= 0:
            word = int(tokens[i])
            i += 1
            if keep_prob[word] < 1.0:
                r = lcg(r)
                if keep_prob[word] < (r >> 40) / float(ALIAS_ONE):
                    continue
            sentence.append(word)
        i += 1
        for pos in range(len(sentence)):
            r = lcg(r)
            reach = window - ((r >> 16) % window)
            lo, hi = max(pos - reach, 0), min(pos + reach + 1, len(sentence))
            pairs += [(sentence[c], sentence[pos]) for c in range(lo, hi) if c != pos]
    return pairs


def test_pairs_are_the_batch_kernels_windows_batch_by_batch():
    rng = np.random.default_rng(5)
    tokens = rng.integers(0, 20, 300).astype(np.int32)
    tokens[[40, 41, 130, 199, 299]] = -1  # an empty sentence among them
    starts = np.array([0, 100, 200, 300], np.int64)
    seeds = np.array([11, 2**63 + 5, 99], np.uint64)
    keep = zipf_vocab(20).keep_probabilities(0.01)
    assert (keep < 1).sum() > 3
    contexts, centres = window_pairs(tokens, starts, seeds, keep, 4)
    want = [p for b in range(3) for p in reference_pairs(tokens[starts[b] : starts[b + 1]], seeds[b], keep, 4)]
    assert len(want) > 200
    assert list(zip(contexts.tolist(), centres.tolist(), strict=True)) == want


def test_chunks_cut_each_group_into_near_equal_pieces_of_at_most_the_limit():
    groups = np.repeat(np.array([4, 9, 2, 7]), [3, 1, 33, 16]).astype(np.int64)
    starts = chunk_starts(groups, 16)
    sizes = np.diff(starts)
    assert sizes.tolist() == [3, 1, 11, 11, 11, 16]
    assert all(len(set(groups[a:b])) == 1 for a, b in itertools.pairwise(starts))


def test_left_partitions_place_every_word_once_and_balance_the_mass():
    mass = zipf_vocab(5000).counts.astype(np.float64)
    plan = left_partitions(mass, 8, np.random.default_rng(1))
    assert sorted(plan.members.tolist()) == list(range(5000))
    assert (plan.members[plan.first[plan.owner] + plan.local] == np.arange(5000)).all()
    loads = np.bincount(plan.owner, weights=mass, minlength=8)
    assert loads.max() - loads.min() <= mass[8 * 8 :].max()
    other = left_partitions(mass, 8, np.random.default_rng(2))
    assert (other.owner != plan.owner).mean() > 0.5  # a new epoch's placement mixes the words afresh
    assert (other.owner[:64] == plan.owner[:64]).all()  # the heaviest, placed first, stay


@pytest.mark.parametrize("machines", [1, 2, 3, 8])
def test_the_schedule_pairs_every_left_with_every_right_once_a_sweep_without_sharing_rows(machines):
    parts = 2 * machines
    met = set()
    for substep in range(parts):
        rights = [block_right(m, substep, machines) for m in range(machines)]
        assert len(set(rights)) == machines  # no right partition in two blocks at once
        met |= {(m, j) for m, j in enumerate(rights)}
        for m, j in enumerate(rights):  # next needed two sub-steps on, by the machine before
            assert block_right((m - 1) % machines, substep + 2, machines) == j
    assert len(met) == machines * parts


def test_a_pairs_block_and_key_name_its_words_again():
    vocab_size, machines = 300, 4
    plan = left_partitions(zipf_vocab(vocab_size).counts.astype(np.float64), machines, np.random.default_rng(0))
    rng = np.random.default_rng(4)
    contexts, centres = rng.integers(0, vocab_size, (2, 1000)).astype(np.int32)
    packed = block_keys(contexts, centres, plan.owner, plan.local, machines, plan.key_span)
    blocks, keys = np.divmod(packed, plan.key_span)
    assert (blocks // plan.parts == plan.owner[contexts]).all()
    assert (blocks % plan.parts == centres % plan.parts).all()
    for block in range(plan.blocks):
        machine, part = divmod(block, plan.parts)
        mine = np.flatnonzero(blocks == block)
        members = plan.members[plan.first[machine] : plan.first[machine + 1]]
        back = block_pairs(keys[mine], np.arange(len(mine))[::-1].copy(), members, plan.parts, part)
        by_centre = np.lexsort((-mine, centres[mine]))  # by centre, each group in the order given: reversed
        np.testing.assert_array_equal(back[0], contexts[mine][by_centre])
        np.testing.assert_array_equal(back[1], centres[mine][by_centre])


def reference_frames(contexts, centres, plan):
    """``machine_frames`` in numpy: each pair's block and key, the pairs sorted by
    (block, key) with ``np.lexsort``, each block's keys coded by ``encode_frames``."""
    owner = plan.owner[contexts].astype(np.int64)
    blocks = owner * plan.parts + centres % plan.parts
    keys = centres // plan.parts * plan.sizes[owner] + plan.local[contexts]
    order = np.lexsort((keys, blocks))
    counts = np.bincount(blocks, minlength=plan.blocks).astype(np.int64)
    data, at = encode_frames(keys[order], np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))
    return data, at, counts


@pytest.mark.parametrize("machines", [1, 3, 32])
def test_a_machines_frames_are_its_pairs_sorted_by_block_and_key(machines):
    ids, vocab = zipf_text(30_000, 700, machines)
    rng = np.random.default_rng(machines)
    starts = np.arange(0, len(ids) + 1, 1000, dtype=np.int64)
    seeds = rng.integers(0, 2**63, len(starts) - 1).astype(np.uint64)
    text = window_pairs(ids, starts, seeds, vocab.keep_probabilities(1e-3), 5)  # many repeated pairs
    uniform = rng.integers(0, 700, (2, 20_000)).astype(np.int32)
    few = np.array([[699, 0, 5, 699], [699, 699, 0, 699]], np.int32)  # the largest key, a pair repeated
    plan = left_partitions(vocab.counts.astype(np.float64), machines, rng)
    for contexts, centres in (text, uniform, few, np.empty((2, 0), np.int32)):
        frames = machine_frames(contexts, centres, plan)
        for got, want in zip(frames, reference_frames(contexts, centres, plan), strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
        assert frames.counts.sum() == len(contexts) and len(frames.at) == plan.blocks + 1
    assert len(text[0]) > 50_000


def test_a_plans_key_span_exceeds_every_key_even_with_fewer_words_than_machines():
    for vocab_size, machines in ((700, 3), (5, 4), (64, 32), (1, 1)):
        plan = left_partitions(np.ones(vocab_size), machines, np.random.default_rng(0))
        words = np.arange(vocab_size, dtype=np.int32)
        contexts, centres = np.repeat(words, vocab_size), np.tile(words, vocab_size)  # every pair
        blocks, keys = np.divmod(block_keys(contexts, centres, plan.owner, plan.local, machines, plan.key_span),
                                 plan.key_span)  # fmt: skip
        assert keys.max() < plan.key_span and blocks.max() < plan.blocks
        np.testing.assert_array_equal(blocks, plan.owner[contexts] * plan.parts + centres % plan.parts)


def test_rho_makes_each_word_as_often_a_noise_word_as_with_draws_from_the_whole():
    vocab = zipf_vocab(400)
    noise = vocab.noise_distribution(0.75)
    kept = vocab.counts * vocab.keep_probabilities(1e-3)
    centres = kept / kept.sum()
    noises = right_noise(noise, centres, 6, 5, corrected=True)
    expected = np.zeros(400)
    for part, table in enumerate(noises):
        members = right_members(part, 6, 400)  # the words at the draws' places
        assert len(table.alias_prob) == len(members) and (members % 6 == part).all()
        share = alias_probabilities(table.alias_prob, table.alias_idx)
        expected[members] += centres[members].sum() * table.draws * share
    np.testing.assert_allclose(expected, 5 * noise, rtol=1e-5)
    assert max(t.draws for t in noises) > 5.5  # the partition of the likeliest words is corrected most
    assert all(t.draws == 5 for t in right_noise(noise, centres, 6, 5, corrected=False))


def test_the_learning_rate_runs_down_block_after_block():
    steps = (2, 3, 8)
    ends = [block_alphas((0.025, 0.0001), (e, k, s), steps) for e in range(2) for k in range(3) for s in range(8)]
    assert ends[0][0] == 0.025
    assert ends[-1][1] == pytest.approx(0.0001)
    assert all(a[1] == pytest.approx(b[0]) for a, b in itertools.pairwise(ends))


def reference_chunks(chunks, order, syn0, syn1neg, noise, alphas, seed):
    """train_chunks in numpy: each chunk's draws, then its window of logistic units."""
    r, loss = int(seed), 0.0
    for i, c in enumerate(order):
        contexts, centre = chunks.contexts[chunks.starts[c] : chunks.starts[c + 1]], int(chunks.centres[c])
        r = lcg(r)
        count = int(noise.draws) + (1 if (r >> 40) / float(ALIAS_ONE) < noise.draws - int(noise.draws) else 0)
        rows = [centre]
        for _ in range(count):
            place, r = draw_noise(r, noise.alias_prob, noise.alias_idx)
            if place != centre:
                rows.append(int(place))
        alpha = np.float32(alphas[0] + (alphas[1] - alphas[0]) * i / len(order))
        units = [(syn1neg, row, 1.0 if d == 0 else 0.0, False, 0.0) for d, row in enumerate(rows)]
        step, grads = logistic_units(syn0[contexts].copy(), units, alpha)
        loss += step
        for context, grad in zip(contexts, grads, strict=True):
            syn0[context] += grad
    return loss


def chunk_tables(vocab: Vocab, rng: np.random.Generator) -> tuple[np.ndarray, Tables]:
    """Random nonzero weights over ``vocab`` and its tables, for negative sampling."""
    syn0 = (rng.standard_normal((len(vocab), D)) * 0.3).astype(np.float32)
    syn1neg = (rng.standard_normal((len(vocab), D)) * 0.3).astype(np.float32)
    threshold, alias = vocab.alias_table(0.75)
    log_q = np.log(vocab.noise_distribution(0.75)).astype(np.float32)
    paths = path_tables(vocab, TrainConfig())
    return syn0, Tables(np.zeros((0, D), np.float32), syn1neg, *paths, threshold, alias, log_q)


@pytest.mark.parametrize("draws", [2.0, 3.4, 7.0])
def test_the_chunk_kernel_makes_the_references_updates(draws):
    vocab, rng = zipf_vocab(30), np.random.default_rng(8)
    syn0, tables = chunk_tables(vocab, rng)  # syn1neg: a right partition's own matrix, 30 places
    prob, idx = vocab.alias_table(0.75)[0][:10], np.arange(10, dtype=np.int32)  # noise words at places 0-9
    noise = ChunkNoise(prob, idx, draws)
    sizes = [16, 1, 5, 9, 2, 16]
    contexts = rng.integers(0, 30, sum(sizes)).astype(np.int32)
    centres = rng.integers(0, 10, len(sizes)).astype(np.int32)
    chunks = Chunks(contexts, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64), centres)
    order = np.array([3, 0, 5, 1, 4, 2], np.int64)
    alphas = np.array([0.05, 0.02])
    ref_syn0, ref_syn1neg = syn0.copy(), tables.syn1neg.copy()
    want = reference_chunks(chunks, order, ref_syn0, ref_syn1neg, noise, alphas, 77)
    settings = chunk_settings(5, int(np.ceil(draws)), 1)
    loss, pairs = train_chunks(chunks, order, syn0, tables, noise, settings, alphas, np.uint64(77))
    assert pairs == sum(sizes)
    assert loss == pytest.approx(want, rel=1e-5)
    np.testing.assert_allclose(syn0, ref_syn0, atol=1e-5, rtol=0)
    np.testing.assert_allclose(tables.syn1neg, ref_syn1neg, atol=1e-5, rtol=0)
    assert np.abs(tables.syn1neg - chunk_tables(vocab, np.random.default_rng(8))[1].syn1neg).max() > 1e-2


def test_a_blocks_chunks_hold_every_machines_pairs_of_it_once_grouped_by_centre():
    vocab_size, machines = 200, 3
    plan = left_partitions(zipf_vocab(vocab_size).counts.astype(np.float64), machines, np.random.default_rng(0))
    rng = np.random.default_rng(6)
    made = [rng.integers(0, vocab_size, (2, n)).astype(np.int32) for n in (3000, 0, 5000)]
    frames = [machine_frames(contexts, centres, plan) for contexts, centres in made]
    assert all(f.counts.sum() == len(c) for f, (c, _) in zip(frames, made, strict=True))
    for block in (0, 7, plan.blocks - 1):
        chunks, order = block_chunks([f.frame(block) for f in frames], plan, block, np.random.default_rng(block))
        machine, part = divmod(block, plan.parts)
        want = sorted((int(c), int(o)) for cs, os in made for c, o in zip(cs, os, strict=True)
                      if plan.owner[c] == machine and o % plan.parts == part)  # fmt: skip
        got = [(int(c), int(chunks.centres[i])) for i in range(len(order))
               for c in chunks.contexts[chunks.starts[i] : chunks.starts[i + 1]]]  # fmt: skip
        assert sorted(got) == want and len(want) > 50
        assert sorted(order.tolist()) == list(range(len(chunks.centres)))
        assert np.diff(chunks.starts).max() <= 16
        assert len(set(chunks.centres.tolist())) == len(set(o for _, o in want))  # a centre's chunks are one run


def zipf_text(tokens: int, vocab_size: int, seed: int) -> tuple[np.ndarray, Vocab]:
    """``tokens`` ids drawn from a Zipf law over ``vocab_size`` words, sentences of 40,
    and their vocabulary (ids ranks by count)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocab_size + 1)
    ids = rng.choice(vocab_size, tokens, p=weights / weights.sum()).astype(np.int32)
    counts = np.bincount(ids, minlength=vocab_size)
    rank = np.empty(vocab_size, np.int32)
    rank[np.argsort(-counts, kind="stable")] = np.arange(vocab_size)
    ids = rank[ids]
    ids[39::40] = -1
    return ids, Vocab([b"w%d" % i for i in range(vocab_size)], np.sort(counts)[::-1].astype(np.int64) + 1)


def block_machines(ids: np.ndarray, vocab: Vocab, config: TrainConfig, schedule: Schedule) -> list[BlockMachine]:
    """``schedule.machines`` connected machines, each on a contiguous run of batches of 1,000 ids."""
    starts = np.arange(0, len(ids) + 1, 1000, dtype=np.int64)
    bounds = np.linspace(0, len(starts) - 1, schedule.machines + 1).astype(int)
    machines = []
    for rank in range(schedule.machines):
        first, last = bounds[rank], bounds[rank + 1]
        text = Text(ids[starts[first] : starts[last]], starts[first : last + 1] - starts[first], first, len(starts) - 1)
        machines.append(BlockMachine(rank, text, vocab, config, schedule))
    for machine in machines:
        machine.connect(machines)
    return machines


BLOCK_CONFIG = TrainConfig(model="skipgram", dim=16, epochs=3, seed=5, threads=1, sample=1e-2, min_count=1)


def test_a_run_resumed_from_a_sweeps_weights_goes_on_as_if_never_stopped():
    """Every row has one owner: the rows gathered after a sweep are the whole model, and
    machines started from them at the next sweep train as the first machines would have."""
    ids, vocab = zipf_text(24_000, 300, 1)
    config, schedule = BLOCK_CONFIG.resolved(), Schedule(machines=3, sweeps=2)
    whole = block_machines(ids, vocab, config, schedule)
    saved = {}

    def keep(epoch: int, sweep: int) -> None:
        saved[(epoch, sweep)] = gather(whole, 300, 16)

    assert train_blocks(whole, config.epochs, schedule, after_sweep=keep)
    resumed = block_machines(ids, vocab, config, schedule)
    train_blocks(resumed, config.epochs, schedule, Start(1, 1, saved[(1, 0)]))
    for got, want in zip(gather(resumed, 300, 16), gather(whole, 300, 16), strict=True):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(saved[(1, 0)][1], saved[(2, 1)][1])  # the output rows trained on after the save
    stopped = block_machines(ids, vocab, config, schedule)
    assert not train_blocks(stopped, config.epochs, schedule, after_sweep=lambda epoch, sweep: (epoch, sweep) == (1, 0))
    for got, want in zip(gather(stopped, 300, 16), saved[(1, 0)], strict=True):  # stopped there, not a sweep later
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("machines", [1, 2, 4])
def test_a_run_on_any_number_of_machines_trains_every_pair_once(machines):
    ids, vocab = zipf_text(24_000, 300, 2)
    config, schedule = BLOCK_CONFIG.resolved(), Schedule(machines=machines, sweeps=2)
    run = block_machines(ids, vocab, config, schedule)
    train_blocks(run, config.epochs, schedule)
    pairs = sum(machine.trained()[1] for machine in run)
    made = [sum(len(sweep_pairs(m.text, m.keep_prob, config, schedule, (e, k))[0]) for m in run for k in range(2))
            for e in range(config.epochs)]  # fmt: skip
    assert pairs.tolist() == made
    syn0, syn1neg = gather(run, 300, 16)
    assert np.isfinite(syn0).all() and np.abs(syn1neg).max() > 0.01


@pytest.mark.parametrize("machines", [1, 3])
def test_the_machines_count_the_hand_off_formulas_bytes_every_sweep(machines):
    ids, vocab = zipf_text(12_000, 301, 3)  # 301 words: the 2N right partitions differ in size
    config, schedule = BLOCK_CONFIG.resolved(), Schedule(machines=machines, sweeps=2)
    run = block_machines(ids, vocab, config, schedule)
    counted = []
    train_blocks(run, config.epochs, schedule, after_sweep=lambda e, k: counted.append(sent_total(run).right_bytes))
    per_sweep = np.diff([0, *counted]).tolist()
    assert per_sweep == [handoff_bytes(301, machines, config.dim)] * (config.epochs * 2)
    assert per_sweep[0] == (0 if machines == 1 else 3 * 301 * 16 * 4)
