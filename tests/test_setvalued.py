"""Set-valued attributes (CSR item sets), external knowledge files and linking (Shi et al. 2010, Def. 2).

The Figure 1 data of the paper spells the symptom "Sore Throat" in table (a) and "Sore throat" in
tables (b)-(d); item matching is exact, so the fixtures here use "Sore Throat" throughout.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ConfigError, InputError, SdcWarning
from sdckit.setvalued import ItemSets, Knowledge, linked_labels, read_knowledge

SYMPTOMS = [
    "Coughing;Headache;Sore Throat",
    "Coughing;Headache",
    "Headache;Vomiting",
    "Headache;Sore Throat",
]
FLU = ["Coughing", "Headache", "Sore Throat"]
HEPATITIS = ["Loss of appetite", "Vomiting", "Dark urine"]


def figure1_records() -> ItemSets:
    return ItemSets.from_column(pl.Series("Symptoms", SYMPTOMS))


# ItemSets ----------------------------------------------------------------------------------------------


def test_from_column_codes_and_vocabulary():
    records = figure1_records()
    assert records.vocabulary == ("Coughing", "Headache", "Sore Throat", "Vomiting")
    assert records.n_records == 4
    assert records.indptr.tolist() == [0, 3, 5, 7, 9]
    assert records.items.tolist() == [0, 1, 2, 0, 1, 1, 3, 1, 2]
    assert records.indptr.dtype == np.int64 and records.items.dtype == np.int32
    assert records.lengths().tolist() == [3, 2, 2, 2]
    assert records.row(2).tolist() == [1, 3]
    assert records.texts(3) == ("Headache", "Sore Throat")


def test_from_column_strips_collapses_and_reads_empty_sets():
    column = pl.Series("s", [" b ; a;b ", None, "", ";;", "c"])
    sets = ItemSets.from_column(column)
    assert sets.vocabulary == ("a", "b", "c")
    assert sets.lengths().tolist() == [2, 0, 0, 0, 1]
    assert sets.to_column().to_list() == ["a;b", "", "", "", "c"]


def test_from_column_other_separator_and_list_column():
    assert ItemSets.from_column(pl.Series(["x|y", "y"]), separator="|").to_column("|").to_list() == [
        "x|y",
        "y",
    ]
    lists = pl.Series("s", [["y", "x", "y"], [], None], dtype=pl.List(pl.String))
    assert ItemSets.from_column(lists).to_column().to_list() == ["x;y", "", ""]


def test_from_column_with_vocabulary():
    sets = ItemSets.from_column(pl.Series(["b", "a;b"]), vocabulary=["c", "b", "a"])
    assert sets.vocabulary == ("a", "b", "c")
    assert sets.items.tolist() == [1, 0, 1]
    with pytest.raises(InputError, match=r"attribute 's'.*'z'"):
        ItemSets.from_column(pl.Series("s", ["a;z"]), vocabulary=["a"])


def test_round_trip_column():
    records = figure1_records()
    again = ItemSets.from_column(records.to_column(), vocabulary=records.vocabulary)
    assert again == records
    assert again != records.without(np.eye(1, records.items.size, dtype=bool).ravel())
    assert records.to_column().to_list() == SYMPTOMS


def test_to_column_refuses_separator_inside_item():
    sets = ItemSets.from_lists([["a;b"]])
    with pytest.raises(ConfigError, match="separator"):
        sets.to_column(";")
    assert sets.to_column("|").to_list() == ["a;b"]


def test_from_long_positions_and_ids():
    frame = pl.DataFrame({"r": [2, 0, 0, 2, 0], "i": ["x", "y", "x", "x", " "]})
    sets = ItemSets.from_long(frame, "r", "i", n_records=4)
    assert sets.to_column().to_list() == ["x;y", "", "x", ""]
    assert ItemSets.from_long(frame, "r", "i").n_records == 3
    by_id = ItemSets.from_long(
        pl.DataFrame({"id": ["p2", "p1", "p1"], "item": ["b", "a", "c"]}),
        "id",
        "item",
        record_ids=pl.Series(["p1", "p2", "p3"]),
    )
    assert by_id.to_column().to_list() == ["a;c", "b", ""]
    with pytest.raises(InputError, match="p9"):
        ItemSets.from_long(
            pl.DataFrame({"id": ["p9"], "item": ["a"]}), "id", "item", record_ids=pl.Series(["p1"])
        )
    with pytest.raises(InputError, match="'missing'"):
        ItemSets.from_long(frame, "missing", "i")
    with pytest.raises(InputError, match="positions"):
        ItemSets.from_long(frame, "r", "i", n_records=2)


def test_from_long_equals_from_column():
    records = figure1_records()
    long = pl.DataFrame(
        {"record": records.record_of_entries(), "item": records.to_column().str.split(";").explode()}
    )
    again = ItemSets.from_long(long, "record", "item", n_records=4)
    assert np.array_equal(again.indptr, records.indptr)
    assert np.array_equal(again.items, records.items)
    assert again.vocabulary == records.vocabulary


def test_to_sparse():
    matrix = figure1_records().to_sparse()
    assert matrix.shape == (4, 4)
    assert matrix.toarray().tolist() == [[1, 1, 1, 0], [1, 1, 0, 0], [0, 1, 0, 1], [0, 1, 1, 0]]


def test_without_removes_entries():
    records = figure1_records()
    removed = np.zeros(records.items.size, dtype=bool)
    removed[[0, 5, 6]] = True  # Coughing of record 0, the whole record 2
    smaller = records.without(removed)
    assert smaller.vocabulary == records.vocabulary
    assert smaller.to_column().to_list() == [
        "Headache;Sore Throat",
        "Coughing;Headache",
        "",
        "Headache;Sore Throat",
    ]
    assert smaller.indptr.tolist() == [0, 2, 4, 4, 6]
    assert records.without(np.zeros(records.items.size, dtype=bool)).to_column().to_list() == SYMPTOMS
    with pytest.raises(ValueError, match="one flag per stored item"):
        records.without(np.zeros(3, dtype=bool))


def test_itemsets_validation():
    with pytest.raises(ValueError, match="sorted and unique"):
        ItemSets(indptr=np.array([0, 2]), items=np.array([1, 0]), vocabulary=("a", "b"))
    with pytest.raises(ValueError, match="sorted"):
        ItemSets(indptr=np.array([0, 1]), items=np.array([0]), vocabulary=("b", "a"))
    with pytest.raises(ValueError, match="codes"):
        ItemSets(indptr=np.array([0, 1]), items=np.array([5]), vocabulary=("a",))
    # a decrease where a new row starts is fine
    ItemSets(indptr=np.array([0, 1, 2]), items=np.array([1, 0]), vocabulary=("a", "b"))


# Knowledge files ---------------------------------------------------------------------------------------


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def figure1_knowledge(vocabulary=None):
    return Knowledge.from_mapping({"Flu": FLU, "Hepatitis B": HEPATITIS}, vocabulary=vocabulary)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "e.csv",
            "label,item\nFlu,Coughing\nFlu,Headache\nHepatitis B,Loss of appetite\nFlu,Sore Throat\n"
            "Hepatitis B,Vomiting\nHepatitis B,Dark urine\nFlu,Headache\n",
        ),
        (
            "e.csv",
            "Label , Items\nFlu,Coughing; Headache;Sore Throat\n"
            "Hepatitis B,Loss of appetite;Vomiting;Dark urine\n",
        ),
        (
            "e.tsv",
            "label\titems\nFlu\tCoughing;Headache;Sore Throat\n"
            "Hepatitis B\tLoss of appetite;Vomiting;Dark urine\n",
        ),
        (
            "e.yaml",
            "Flu: [Coughing, Headache, Sore Throat]\n"
            "Hepatitis B:\n  - Loss of appetite\n  - Vomiting\n  - Dark urine\n",
        ),
        ("e.yml", "Flu: Coughing;Headache;Sore Throat\nHepatitis B: Loss of appetite;Vomiting;Dark urine\n"),
    ],
)
def test_read_knowledge_formats(tmp_path, name, text):
    knowledge = read_knowledge(write(tmp_path, name, text))
    assert knowledge.labels == ("Flu", "Hepatitis B")
    assert knowledge.sets.vocabulary == (
        "Coughing",
        "Dark urine",
        "Headache",
        "Loss of appetite",
        "Sore Throat",
        "Vomiting",
    )
    assert knowledge.sets.to_column().to_list() == [
        "Coughing;Headache;Sore Throat",
        "Dark urine;Loss of appetite;Vomiting",
    ]


def test_read_knowledge_over_data_vocabulary_warns_for_unknown_items(tmp_path):
    path = write(
        tmp_path,
        "e.csv",
        "label,items\nFlu,Coughing;Headache;Sore Throat\nHepatitis B,Loss of appetite;Vomiting;Dark urine\n",
    )
    records = figure1_records()
    with pytest.warns(SdcWarning, match=r"e\.csv.*2 items.*'Dark urine', 'Loss of appetite'"):
        knowledge = read_knowledge(path, vocabulary=records.vocabulary)
    assert knowledge.sets.vocabulary == records.vocabulary
    assert knowledge.sets.to_column().to_list() == ["Coughing;Headache;Sore Throat", "Vomiting"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_knowledge(path, vocabulary=list(records.vocabulary) + ["Dark urine", "Loss of appetite"])


@pytest.mark.parametrize(
    ("name", "text", "pattern"),
    [
        ("e.csv", "disease,item\nFlu,Coughing\n", r"e\.csv:1: .*'label'"),
        ("e.csv", "label,symptom\nFlu,Coughing\n", r"e\.csv:1: .*'item'"),
        ("e.csv", "label,item,items\nFlu,a,b\n", r"e\.csv:1: .*exactly one"),
        ("e.csv", "label,item\nFlu,Coughing\nFlu,Headache,extra\n", r"e\.csv:3: expected 2 fields.*got 3"),
        ("e.csv", "label,item\nFlu\n", r"e\.csv:2: expected 2 fields"),
        ("e.csv", "label,items\nFlu,a;b\nCold, ; \n", r"e\.csv:3: label 'Cold' has an empty item set"),
        ("e.csv", "label,item\nFlu,a\nCold,\n", r"e\.csv:3: label 'Cold' has an empty item"),
        (
            "e.csv",
            "label,items\nFlu,a\nCold,b\nFlu,c\n",
            r"e\.csv:4: label 'Flu' is given twice \(first at line 2\)",
        ),
        ("e.csv", "label,items\n,a\n", r"e\.csv:2: empty label"),
        ("e.csv", "", r"e\.csv: the file is empty"),
        ("e.csv", "label,items\n\n", r"e\.csv: .*no labels"),
        ("e.yaml", "Flu: [a, b]\nCold: []\n", r"e\.yaml:2: label 'Cold' has an empty item set"),
        (
            "e.yaml",
            "Flu: [a]\nCold: [b]\nFlu: [c]\n",
            r"e\.yaml:3: label 'Flu' is given twice \(first at line 1\)",
        ),
        ("e.yaml", "Flu: [a\nCold: [b]\n", r"e\.yaml:\d+: malformed YAML"),
        ("e.yaml", "- a\n- b\n", r"e\.yaml:1: expected a mapping"),
        ("e.yaml", "Flu:\n  x: 1\n", r"e\.yaml:1: label 'Flu': expected a list"),
        ("e.yaml", "Flu:\n", r"e\.yaml:1: label 'Flu' has an empty item set"),
    ],
)
def test_read_knowledge_bad_files(tmp_path, name, text, pattern):
    with pytest.raises(InputError, match=pattern):
        read_knowledge(write(tmp_path, name, text))


def test_read_knowledge_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_knowledge(tmp_path / "nope.csv")


def test_knowledge_rejects_duplicated_labels_and_empty_sets():
    with pytest.raises(ConfigError, match="'Flu' appears more than once"):
        Knowledge(labels=("Flu", "Flu"), sets=ItemSets.from_lists([["a"], ["b"]]))
    with pytest.raises(ConfigError, match="'Cold' has an empty item set"):
        Knowledge.from_mapping({"Flu": ["a"], "Cold": []})


# Linking (Definition 2) --------------------------------------------------------------------------------


def test_figure1_linking():
    records = figure1_records()
    with pytest.warns(SdcWarning):
        knowledge = figure1_knowledge(records.vocabulary)
    linked = linked_labels(records, knowledge)
    assert linked.dtype == bool and linked.shape == (4, 2)
    # K(t1) = K(t2) = K(t4) = {Flu}; t3 = {Headache, Vomiting}: Vomiting is no Flu symptom and Headache
    # no Hepatitis B symptom, so K(t3) is empty.
    assert linked.toarray().tolist() == [[True, False], [True, False], [False, False], [True, False]]


def test_empty_record_links_to_every_label():
    records = ItemSets.from_column(pl.Series(["a", None, "z"]))
    # 'b' never occurs in the data: B keeps an empty set over the data's vocabulary, so only the empty
    # record links to it.
    with pytest.warns(SdcWarning, match="'b'"):
        knowledge = Knowledge.from_mapping({"A": ["a"], "B": ["b"], "C": ["a", "z"]}).with_vocabulary(
            records.vocabulary
        )
    assert linked_labels(records, knowledge).toarray().tolist() == [
        [True, False, True],
        [True, True, True],
        [False, False, True],
    ]


def test_linking_reencodes_another_vocabulary():
    records = figure1_records()
    knowledge = Knowledge.from_mapping({"Flu": FLU, "Hepatitis B": HEPATITIS, "Cold": ["Coughing", "Fever"]})
    assert knowledge.sets.vocabulary != records.vocabulary
    assert linked_labels(records, knowledge).toarray().tolist() == [
        [True, False, False],
        [True, False, False],
        [False, False, False],
        [True, False, False],
    ]


WORDS = ["a", "b", "c", "d", "e", "f"]
small_sets = st.lists(st.sets(st.sampled_from(WORDS), max_size=4), min_size=1, max_size=12)


@settings(max_examples=60)
@given(
    records=small_sets,
    labels=st.lists(st.sets(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=1, max_size=6),
)
def test_linking_equals_brute_force_subset_check(records, labels):
    sets = ItemSets.from_lists([sorted(s) for s in records], vocabulary=WORDS)
    knowledge = Knowledge(
        labels=tuple(f"L{i}" for i in range(len(labels))),
        sets=ItemSets.from_lists([sorted(s) for s in labels], vocabulary=WORDS),
    )
    expected = [[record <= label for label in labels] for record in records]
    assert linked_labels(sets, knowledge).toarray().tolist() == expected
    # the CSR arrays hold the same sets as the Python ones
    assert [set(sets.texts(i)) for i in range(sets.n_records)] == records


def test_recode_and_used_items():
    sets = ItemSets.from_lists([["b", "c"], ["a"]])
    wider = sets.recode(["a", "b", "c", "d"])
    assert wider.vocabulary == ("a", "b", "c", "d")
    assert wider.to_column().to_list() == ["b;c", "a"]
    assert wider.used_items().tolist() == [True, True, True, False]
    assert sets.recode(["b", "c"], unknown="drop").to_column().to_list() == ["b;c", ""]
    with pytest.raises(InputError, match="'a'"):
        sets.recode(["b", "c"])


def test_knowledge_from_mapping_text_values_and_yaml_items_as_written(tmp_path):
    knowledge = Knowledge.from_mapping({"Flu": "Coughing; Headache", "Cold": ["Sneezing"]})
    assert knowledge.labels == ("Flu", "Cold")
    assert knowledge.sets.to_column().to_list() == ["Coughing;Headache", "Sneezing"]
    codes = read_knowledge(write(tmp_path, "codes.yaml", "L1: [001, 2.50, yes]\n"))
    assert codes.sets.vocabulary == ("001", "2.50", "yes")
