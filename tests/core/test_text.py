from core.text import counted


def test_a_count_and_its_noun_agree():
    assert counted(1, "strip") == "1 strip"
    assert counted(0, "strip") == "0 strips" and counted(2, "NLA strip") == "2 NLA strips"
    assert counted(1200, "frame") == "1,200 frames" and counted(3, "body", "bodies") == "3 bodies"
