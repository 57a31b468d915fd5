"""Document ↔ ``conllu.TokenList`` (the ``conllu`` library's objects): the round trip is byte-identical CoNLL-U."""

from conllu.models import TokenList

from swvp.data.text import Document, Sentence, Token, Word

CONLLU = """# newdoc id = d1
# newpar
# sent_id = a-1
# text = Στο σπίτι, don't.
# translit = sto spiti
1-2	Στο	_	_	_	_	_	_	_	_
1	Σ	σε	ADP	AsPpSp	_	3	case	_	_
2	το	ο	DET	AtDf	Case=Acc|Gender=Neut|Number=Sing	3	det	_	_
3	σπίτι	σπίτι	NOUN	NoCm	Case=Acc|Gender=Neut|Number=Sing	0	root	_	SpaceAfter=No
4	,	,	PUNCT	,	_	3	punct	_	_
5-6	don't	_	_	_	_	_	_	_	SpaceAfter=No
5	do	do	AUX	VBP	Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin	3	aux	_	_
6	n't	not	PART	RB	_	3	advmod	_	_
7	.	.	PUNCT	.	_	3	punct	_	Gloss=stop|SpaceAfter=No

# newpar id = p2
# sent_id = a-2
# text = Nothing parsed
1	Nothing	_	_	_	_	_	_	_	_
2	parsed	_	_	_	_	_	_	_	_

"""


def test_tokenlists_hold_the_columns_and_round_trip_byte_identically():
    doc = Document.from_conllu(CONLLU)
    assert doc.to_conllu() == CONLLU
    lists = doc.to_conllu_tokenlists()
    assert [type(tl) for tl in lists] == [TokenList, TokenList]
    first = lists[0]
    assert dict(first.metadata) == {"newdoc id": "d1", "newpar": None, "sent_id": "a-1", "text": "Στο σπίτι, don't.",
                                    "translit": "sto spiti"}
    assert first[0]["id"] == (1, "-", 2) and first[0]["form"] == "Στο"
    assert first[3]["feats"] == {"Case": "Acc", "Gender": "Neut", "Number": "Sing"} and first[3]["head"] == 0
    assert first[3]["misc"] == {"SpaceAfter": "No"} and first[8]["misc"] == {"Gloss": "stop", "SpaceAfter": "No"}
    assert lists[1][0]["head"] is None and lists[1].metadata["newpar id"] == "p2"
    again = Document.from_conllu(lists)
    assert again.to_conllu() == CONLLU
    assert [t.form for t in again.sentences[0].tokens] == ["Στο", "σπίτι", ",", "don't", "."]
    assert not again.sentences[0].tokens[3].space_after and again.sentences[0].tokens[3].is_multiword


def test_an_edited_tokenlist_and_a_built_document_round_trip():
    doc = Document([Sentence([Token("Hello", [Word("Hello", "hello", "INTJ")], space_after=False),
                              Token("!", [Word("!", "!", "PUNCT")])], newdoc=True)])
    lists = doc.to_conllu_tokenlists()
    assert lists[0].metadata["sent_id"] == "1"  # numbered as written
    lists[0][0]["lemma"] = "hi"
    again = Document.from_conllu(lists)
    assert again.sentences[0].words[0].lemma == "hi" and not again.sentences[0].tokens[0].space_after
    assert Document.from_conllu(again.to_conllu_tokenlists()).to_conllu() == again.to_conllu()
    assert Document().to_conllu_tokenlists() == [] and Document.from_conllu([]).sentences == []
