"""A corpus with planted semantic duplicates, generated from sentence templates.

Each topic has facts written twice: as stated and rewritten in other words. A base document
is two or three paragraphs of facts of one topic; its planted duplicates are a near copy with
boilerplate added, the same paragraphs reordered, and a paraphrase (every sentence rewritten).
The distinct documents are other selections of the same topics' facts, so they share topic,
vocabulary and some sentences with the planted groups.
"""

from __future__ import annotations

import json
import os
import random

__all__ = ["FACTS", "BOILERPLATE", "KINDS", "planted_corpus", "pairs_of_groups", "score",
           "write_jsonl"]

FACTS: dict[str, list[tuple[str, str]]] = {
    "baking": [
        ("Bread dough needs time to rise in a warm place before it goes into the oven.",
         "Before baking, let the dough sit somewhere warm so that it can rise."),
        ("Yeast feeds on sugar and releases carbon dioxide, which makes the loaf light.",
         "The loaf turns out airy because yeast eats sugar and gives off carbon dioxide gas."),
        ("Kneading develops gluten, giving the bread its chewy structure.",
         "Working the dough by hand builds gluten, which is what makes bread chewy."),
        ("A hot oven with a tray of water creates steam and a crisp crust.",
         "Put a pan of water into a very hot oven: the steam gives the crust its crunch."),
        ("Sourdough uses a starter of wild yeast instead of packaged yeast.",
         "Instead of store-bought yeast, sourdough relies on a starter full of wild yeasts."),
        ("Salt strengthens the dough and slows down fermentation.",
         "Adding salt makes the dough stronger and keeps fermentation from going too fast."),
        ("Cool the bread on a rack so the bottom does not turn soggy.",
         "Let the loaf cool on a wire rack, otherwise its base gets damp and soft."),
        ("Whole wheat flour absorbs more water than white flour.",
         "Flour made from the whole grain soaks up more liquid than refined white flour does."),
    ],
    "astronomy": [
        ("Jupiter is the largest planet in the solar system and has dozens of moons.",
         "The biggest planet orbiting the Sun is Jupiter, which is circled by many moons."),
        ("Light from the Sun takes about eight minutes to reach the Earth.",
         "Sunlight needs roughly eight minutes to travel to our planet."),
        ("A light year is the distance light travels in one year.",
         "The distance covered by light over a year is what astronomers call a light year."),
        ("Saturn's rings are made of ice and rock particles.",
         "Pieces of ice and stone form the rings that surround Saturn."),
        ("The Moon always shows the same face to the Earth.",
         "We only ever see one side of the Moon from our planet."),
        ("Mars looks red because its soil is rich in iron oxide.",
         "Rust-like iron oxide in the Martian dust gives Mars its reddish colour."),
        ("Telescopes collect more light than the human eye can.",
         "A telescope gathers far more light than our eyes are able to."),
        ("Comets grow bright tails when they come close to the Sun.",
         "As a comet approaches the Sun it develops a glowing tail."),
    ],
    "cycling": [
        ("Check your tyre pressure before every long ride.",
         "Before setting out on a long trip, make sure the tyres are properly inflated."),
        ("A clean and oiled chain makes shifting smoother and lasts longer.",
         "Keeping the chain clean and lubricated gives smoother gear changes and a longer life."),
        ("Wearing a helmet greatly reduces the risk of head injury.",
         "The chance of hurting your head in a crash is much lower with a helmet on."),
        ("Lower gears make climbing steep hills easier.",
         "Shifting into an easier gear helps when riding up a steep slope."),
        ("Lights and reflective clothing keep cyclists visible at night.",
         "After dark, riders stay easy to see with lamps and reflective gear."),
        ("Riding in a group saves energy because others block the wind.",
         "Cycling in a pack takes less effort since the riders shield each other from wind."),
        ("Brake pads wear down and must be replaced from time to time.",
         "Over time the brake pads get thin and need to be swapped for new ones."),
        ("Drinking water regularly prevents fatigue on hot days.",
         "On warm days, sipping water often keeps tiredness away."),
    ],
    "gardening": [
        ("Tomatoes need at least six hours of sunlight a day.",
         "Tomato plants should get six or more hours of sun every day."),
        ("Compost adds nutrients to the soil and improves its texture.",
         "Mixing compost into the ground feeds it and makes it crumbly."),
        ("Water the garden early in the morning to reduce evaporation.",
         "Watering plants at dawn means less of the water evaporates."),
        ("Mulch keeps weeds down and holds moisture in the soil.",
         "A layer of mulch suppresses weeds and stops the soil from drying out."),
        ("Bees and butterflies pollinate many fruit and vegetable crops.",
         "Many fruits and vegetables rely on bees and butterflies for pollination."),
        ("Prune roses in late winter to encourage new growth.",
         "Cutting back rose bushes at the end of winter helps fresh shoots grow."),
        ("Rotating crops each year keeps the soil healthy.",
         "Planting different crops in each bed every year keeps the soil in good shape."),
        ("Seedlings should be hardened off before they are planted outside.",
         "Young plants need to get used to outdoor conditions before going into the ground."),
    ],
}

BOILERPLATE = ("Subscribe to our newsletter for more articles like this one. "
               "Copyright 2024, all rights reserved.")

KINDS = ("boilerplate", "reordered", "paraphrase")


def _doc(paragraphs: list[list[str]]) -> str:
    return "\n\n".join(" ".join(p) for p in paragraphs)


def planted_corpus(n_groups: int = 8, n_distinct: int = 16, seed: int = 0
                   ) -> list[dict[str, object]]:
    """Records ``{"id", "text", "group", "kind"}``: ``n_groups`` base documents (kind
    ``original``), each with one duplicate of every kind in :data:`KINDS` (same ``group``), and
    ``n_distinct`` documents of their own (``group`` -1) on the same topics. Ids are unique
    strings; the order is shuffled."""
    rng = random.Random(seed)
    topics = sorted(FACTS)
    docs: list[dict[str, object]] = []
    used: list[tuple[str, set[int]]] = []

    def pick(topic: str) -> list[int]:
        # four facts, at most two shared with any other document of the topic: documents that
        # share three of their four sentences would be near duplicates themselves
        for _ in range(10_000):
            idx = rng.sample(range(len(FACTS[topic])), 4)
            if all(len(set(idx) & other) <= 2 for t, other in used if t == topic):
                used.append((topic, set(idx)))
                return idx
        raise ValueError(f"planted_corpus: too many documents for the {topic!r} facts")

    for g in range(n_groups):
        topic = topics[g % len(topics)]
        idx = pick(topic)
        paras = [idx[i:i + 2] for i in range(0, len(idx), 2)]
        original = [[FACTS[topic][i][0] for i in p] for p in paras]
        variants = {
            "original": _doc(original),
            "boilerplate": _doc(original) + "\n\n" + BOILERPLATE,
            "reordered": _doc(original[1:] + original[:1]),
            "paraphrase": _doc([[FACTS[topic][i][1] for i in p] for p in paras]),
        }
        for kind, text in variants.items():
            docs.append({"text": text, "group": g, "kind": kind})
    for d in range(n_distinct):
        topic = topics[d % len(topics)]
        idx = pick(topic)
        side = [rng.randrange(2) for _ in idx]
        paras = [list(zip(idx[i:i + 2], side[i:i + 2], strict=True))
                 for i in range(0, len(idx), 2)]
        docs.append({"text": _doc([[FACTS[topic][i][s] for i, s in p] for p in paras]),
                     "group": -1, "kind": "distinct"})
    rng.shuffle(docs)
    for i, doc in enumerate(docs):
        doc["id"] = f"doc{i:04d}"
    return docs


def pairs_of_groups(labels: dict[str, int]) -> set[frozenset[str]]:
    """Every unordered pair of ids with the same label (labels < 0 are singletons)."""
    by: dict[int, list[str]] = {}
    for doc_id, label in labels.items():
        if label >= 0:
            by.setdefault(label, []).append(doc_id)
    return {frozenset((a, b)) for ids in by.values() for i, a in enumerate(ids)
            for b in ids[i + 1:]}


def score(duplicates: list[tuple[str, str]], docs: list[dict[str, object]]
          ) -> dict[str, float]:
    """Pair precision and recall of a dedup run's ``(id, duplicate_of)`` rows against the
    planted groups, and the recall of each kind (a duplicate of that kind found together
    with its group's original)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for a, b in duplicates:
        parent[find(a)] = find(b)
    predicted = pairs_of_groups({str(d["id"]): hash(find(str(d["id"]))) & 0x7FFFFFFF
                                 for d in docs})
    truth = pairs_of_groups({str(d["id"]): int(d["group"]) for d in docs})
    hit = predicted & truth
    out = {"precision": len(hit) / len(predicted) if predicted else 1.0,
           "recall": len(hit) / len(truth) if truth else 1.0, "found": float(len(predicted))}
    original = {d["group"]: str(d["id"]) for d in docs if d["kind"] == "original"}
    for kind in KINDS:
        members = [d for d in docs if d["kind"] == kind]
        out[f"recall_{kind}"] = sum(find(str(d["id"])) == find(original[d["group"]])
                                    for d in members) / len(members)
    return out


def write_jsonl(docs: list[dict[str, object]], directory: str, files: int = 2) -> None:
    """``docs`` as ``files`` JSONL files (``id``, ``text``) in ``directory``."""
    os.makedirs(directory, exist_ok=True)
    for f in range(files):
        with open(os.path.join(directory, f"part{f}.jsonl"), "w") as fh:
            for d in docs[f::files]:
                fh.write(json.dumps({"id": d["id"], "text": d["text"]}) + "\n")
