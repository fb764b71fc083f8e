package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A corpus of downstream error messages, written as downstreams write them (Korean, Japanese, English; any
 * separators, widths and cases), each with what must disappear before an operator sees it and what must stay
 * so that the reason still helps. The row's patient: patno {@code 20481234}, name {@code 김구} (and a Latin and
 * a Japanese patient in some cases), mobile {@code 01012345678}.
 */
class PatientDataMaskTest {

    record Case(String message, List<String> row, List<String> gone, List<String> kept) {
        @Override
        public String toString() {
            return message;
        }
    }

    static final List<String> KIM = List.of("20481234", "김구", "01012345678");
    static final List<String> SMITH = List.of("P-778812", "John Smith", "+1 415 555 0134");
    static final List<String> YAMADA = List.of("00912345", "山田 太郎", "090-1234-5678");

    private static String nfd(String text) {
        return java.text.Normalizer.normalize(text, java.text.Normalizer.Form.NFD);
    }

    static Case c(String message, List<String> row, String gone, String kept) {
        return new Case(message, row, split(gone), split(kept));
    }

    private static List<String> split(String list) {
        return list.isEmpty() ? List.of() : Arrays.asList(list.split("\\|"));
    }

    static Stream<Case> corpus() {
        return Stream.of(
                // the row's own values, in every wording
                c("환자 김구 (010-1234-5678) 없음", KIM, "김구|010-1234-5678|1234", "환자|없음"),
                c("환자 김 구 님의 정보가 없습니다", KIM, "김 구", "환자|정보가 없습니다"),
                c("김구님 연락처 010.1234.5678 확인 필요", KIM, "김구|010.1234.5678", "연락처|확인 필요"),
                c("patient 20481234 not found", KIM, "20481234", "patient|not found"),
                c("patient ２０４８１２３４ not found", KIM, "２０４８１２３４", "patient|not found"),
                c("patno 2048-1234 is not registered", KIM, "2048-1234", "patno|is not registered"),
                c("Patient P20481234 has no guest account", KIM, "20481234", "Patient|has no guest account"),
                c("MRN20481234: no record", KIM, "20481234", "MRN|no record"),
                c("patient 20481234a unknown", KIM, "20481234", "patient|unknown"),
                c("order 120481234 shipped", KIM, "", "order 120481234 shipped"),
                c("患者番号 912345 は未登録", YAMADA, "912345", "患者番号|は未登録"),
                c("mobile 010 1234 5678 invalid for 김구", KIM, "010 1234 5678|김구", "mobile|invalid for"),
                c("mobile ０１０－１２３４－５６７８ rejected", KIM, "０１０－１２３４－５６７８", "mobile|rejected"),
                c("PATIENT JOHN SMITH HAS NO GUEST ACCOUNT", SMITH, "JOHN|SMITH", "PATIENT|HAS NO GUEST ACCOUNT"),
                c("guest for smith, john (P-778812) exists", SMITH, "smith|john|778812", "guest for|exists"),
                c("Patient j o h n s m i t h unknown", SMITH, "j o h n s m i t h", "Patient|unknown"),
                c("Smithson is another patient; form FORM_NOT_DISTRIBUTED", SMITH, "", "Smithson|FORM_NOT_DISTRIBUTED"),
                c("phone (415) 555-0134 of John unreachable", SMITH, "555-0134|John", "phone|unreachable"),
                c("患者 山田太郎 は登録されていません", YAMADA, "山田太郎", "患者|は登録されていません"),
                c("患者ヤマダ タロウ 090-1234-5678", List.of("00912345", "やまだ たろう", ""), "ヤマダ|タロウ|090-1234-5678", "患者"),
                c("患者ﾔﾏﾀﾞ 様", List.of("00912345", "ヤマダ", ""), "ﾔﾏﾀﾞ", "患者|様"),
                // a name written decomposed (NFD: ᄀ ᅵ ᆷ), in the text or in the row
                c("이미 등록된 게스트: " + nfd("김구") + "님", KIM, nfd("김") + "|" + nfd("구"), "이미 등록된 게스트|님"),
                // (a guard: the row's name was found decomposed before, through its NFKC form)
                c("환자 김구 없음", List.of("20481234", nfd("김구"), ""), "김구", "환자|없음"),
                // a resident number as displayed (its rest masked), a two-digit-year date, a phone parted by '/'
                c("주민번호 900102-1****** 확인 불가", KIM, "900102|-1*", "주민번호|확인 불가"),
                c("생년월일이 다른 환자 90.01.02 입니다", KIM, "90.01.02", "생년월일이 다른 환자|입니다"),
                c("date of birth differs: 90.01.02.", KIM, "90.01.02", "date of birth differs:"),
                c("GRP_010_2024_0001 not found; GET /surveys/0012/2024/0001; v10.12.13 G01-02-03", KIM, "", ""),
                c("보호자 연락처 010/9876/5432 오류", KIM, "9876|5432", "보호자 연락처|오류"),
                c("timeout at 12:30:45 from 10.1.12.34 (client v1.2.3)", KIM, "", ""),
                c("患者番号 00912345 の 山田 様", YAMADA, "00912345|山田", "患者番号|様"),
                c("연락처 010\u22121234\u22125678 확인", KIM, "1234|5678", "연락처|확인"),
                c("携帯 090ー1234ー5678 不通", YAMADA, "1234|5678", "携帯|不通"),
                c("길동님 연락 없음", List.of("20481234", "홍길동", ""), "길동", "님 연락 없음"),
                c("홍길 님 확인 필요", List.of("20481234", "홍길동", ""), "홍길", "님 확인 필요"),
                c("山田様 不在", List.of("00912345", "山田\u3000太郎", ""), "山田", "様 不在"),
                c("太郎 様", List.of("00912345", "山田太郎", ""), "太郎", "様"),
                // shapes of personal data, whoever they belong to
                c("보호자 82-10-9876-5432 확인", KIM, "9876|5432", "보호자|확인"),
                c("guardian 0082 10 9876 5432 unreachable", KIM, "9876|5432|0082", "guardian|unreachable"),
                c("緊急連絡先 81-90-8765-4321", YAMADA, "8765|4321", "緊急連絡先"),
                c("보호자 010-9876-5432 로 연락 바랍니다", KIM, "010-9876-5432|9876", "보호자|연락 바랍니다"),
                c("call 02-123-4567 (ward) for details", KIM, "02-123-4567", "call|(ward) for details"),
                c("連絡先 03-1234-5678 まで", YAMADA, "03-1234-5678", "連絡先|まで"),
                c("携帯 080 9876 5432 に連絡", YAMADA, "080 9876 5432", "携帯|に連絡"),
                c("contact +82-10-9876-5432 or +81 90 8765 4321", KIM, "9876-5432|8765 4321|+82|+81", "contact|or"),
                c("contact +821098765432 please", KIM, "+821098765432", "contact|please"),
                c("주민등록번호 900101-1234567 불일치", KIM, "900101-1234567|1234567", "주민등록번호|불일치"),
                c("RRN 9001011234567 mismatch", KIM, "9001011234567", "RRN|mismatch"),
                c("메일 kim.gu@example.co.kr 로 발송 실패", KIM, "kim.gu@example.co.kr|example.co.kr", "메일|발송 실패"),
                c("send to HONG+survey@Hospital.ORG failed", KIM, "HONG+survey@Hospital.ORG", "send to|failed"),
                c("생년월일 1990-01-02 불일치", KIM, "1990-01-02", "생년월일|불일치"),
                c("생년월일 900102 불일치", KIM, "900102", "생년월일|불일치"),
                c("date of birth 1990.1.2 does not match", KIM, "1990.1.2", "date of birth|does not match"),
                c("DOB: 02/01/1990", KIM, "02/01/1990", "DOB"),
                // a birth date only its label marks as one (not a date's shape), in any letter case and width
                c("DOB: 02/01/90 mismatch", KIM, "02/01/90", "DOB|mismatch"),
                c("Birthday 900102 unknown", KIM, "900102", "Birthday|unknown"),
                c("ＢＩＲＴＨＤＡＴＥ：90.01.02 확인", KIM, "90.01.02", "ＢＩＲＴＨＤＡＴＥ|확인"),
                c("1990년 1월 2일생 환자", KIM, "1990년 1월 2일", "생 환자"),
                c("生年月日 平成2年1月2日 が一致しません", YAMADA, "平成2年1月2日", "生年月日|が一致しません"),
                c("born 19900102, patient unknown", KIM, "19900102", "born|patient unknown"),
                // codes and business words stay, so the reason still helps an operator
                c("form UNREG-0 is not registered", KIM, "", "form UNREG-0 is not registered"),
                c("FORM_NOT_REGISTERED: form F100 of group G1 missing", KIM, "", "FORM_NOT_REGISTERED: form F100 of group G1 missing"),
                c("GROUP_NOT_FOUND group GRP-2024-07 not found", KIM, "", "GROUP_NOT_FOUND group GRP-2024-07 not found"),
                c("questionnaire already submitted (ALREADY_SUBMITTED)", KIM, "", "questionnaire already submitted (ALREADY_SUBMITTED)"),
                c("survey SV-1234 not configured", KIM, "", "survey SV-1234 not configured"),
                c("retry after 30 seconds; 5 attempts left", KIM, "", "retry after 30 seconds; 5 attempts left"),
                c("요청 1234건 중 12건 실패", KIM, "", "요청 1234건 중 12건 실패"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("corpus")
    void masksWhatMustDisappearAndKeepsWhatHelpsAnOperator(Case c) {
        String masked = PatientDataMask.mask(c.message(), c.row());

        for (String gone : c.gone()) {
            assertThat(masked).as("masked: %s", masked).doesNotContain(gone);
        }
        for (String kept : c.kept()) {
            assertThat(masked).as("masked: %s", masked).contains(kept);
        }
        if (!c.gone().isEmpty()) {
            assertThat(masked).contains(PatientDataMask.MASK);
        } else {
            assertThat(masked).isEqualTo(c.message());
        }
    }

    /** What PostgreSQL refuses in text (NUL) or a log line would break on becomes a space; half a pair U+FFFD. */
    @org.junit.jupiter.api.Test
    void controlCharactersAndBrokenSurrogatesBecomeText() {
        String controls = "a" + (char) 0 + "b\nc\rd" + (char) 0x7F + "e\tf";
        assertThat(PatientDataMask.mask(controls, java.util.List.of())).isEqualTo("a b c d e f");
        String smile = new String(Character.toChars(0x1F600));
        String broken = "x" + (char) 0xD800 + "y" + (char) 0xDC00 + "z " + smile + (char) 0xDBFF;
        assertThat(PatientDataMask.mask(broken, java.util.List.of())).isEqualTo("x\uFFFDy\uFFFDz " + smile + "\uFFFD");
    }

    @org.junit.jupiter.api.Test
    void aVeryLongTextIsCutAndMaskedInOnePass() {
        String text = "a".repeat(200_000) + " 010-1234-5678";
        String masked = PatientDataMask.mask(text, KIM);
        assertThat(masked).hasSize(PatientDataMask.LONGEST_TEXT + 1).endsWith("…");
        assertThat(PatientDataMask.mask("x".repeat(1500) + " kim@example.org", KIM)).doesNotContain("kim@example.org");
    }

    /** Invisible and reordering characters become spaces: in a terminal, in the console, and to the mask itself. */
    @org.junit.jupiter.api.Test
    void invisibleAndReorderingCharactersBecomeSpaces() {
        assertThat(PatientDataMask.mask("a\u202Eb\u009Bc\u200Bd\u2028e\uFEFFf\u2066g", List.of())).isEqualTo("a b c d e f g");
        // a zero-width space inside the name hid it from the mask
        assertThat(PatientDataMask.mask("환자 김\u200B민수 없음", List.of("김민수"))).doesNotContain("민수").doesNotContain("김");
        assertThat(PatientDataMask.mask("환자 김\u00AD민\u3164수 없음", List.of("김민수"))).doesNotContain("민").doesNotContain("김");
        // and a value holding one is still the value in a text without it
        assertThat(PatientDataMask.mask("환자 김민수 없음", List.of("김민수\u200B"))).doesNotContain("민수");
    }

    /**
     * A value the cut falls in ("…010-1234") is neither the row's value nor a whole phone shape any more: it is masked
     * whole before the cut, written with dashes, with spaces or inside text without spaces.
     */
    @org.junit.jupiter.api.Test
    void aValueTheCutFallsInIsMaskedWhole() {
        for (String[] c : new String[][] {{"word ", " 010-9876-5432 and more"}, {"word ", " 010 9876 5432 and more"},
                {"電話番号", "09098765432に電話"}}) {
            String head = c[0].repeat((PatientDataMask.LONGEST_TEXT - 6) / c[0].length());
            String text = head + "x".repeat(PatientDataMask.LONGEST_TEXT - 6 - head.length()) + c[1];
            String masked = PatientDataMask.mask(text, List.of());
            assertThat(masked).as(c[1]).doesNotContain("98").doesNotContain("010 ").doesNotContain("090").endsWith("***…")
                    .hasSizeLessThanOrEqualTo(PatientDataMask.LONGEST_TEXT + 1);
        }
    }

    @org.junit.jupiter.api.Test
    void aLongUnbrokenNameIsSearchedWholeNotByEachOfItsEnds() {
        // CONTRACT §1 puts no limit on patNm: every prefix and suffix of a 3,000-character run is 9 million
        // characters to fold and search (20,000 characters exhausted a pod's heap); a name's parts stay searched
        String longRun = "가나다라마바사아자차카타파하".repeat(215);
        java.util.Set<String> terms = PatientDataMask.searchTerms(List.of(longRun, "홍길동"), PatientDataMask.LONGEST_TEXT);
        assertThat(terms).containsExactly("홍길동", "홍길", "길동");
        assertThat(PatientDataMask.searchTerms(List.of(longRun.substring(0, 100)), PatientDataMask.LONGEST_TEXT))
                .containsExactly(longRun.substring(0, 100));
        assertThat(PatientDataMask.mask("환자 홍길동 없음 " + longRun.substring(0, 30), List.of(longRun, "홍길동")))
                .isEqualTo("환자 *** 없음 " + longRun.substring(0, 30));
    }

    @org.junit.jupiter.api.Test
    void aNameOfManyWordsIsSearchedByItsFirstPartsNotByEachWord() {
        // 1,300 distinct 16-character Hangul words (a 63 KB patNm): every word with 28 of its ends gave 39,000 terms,
        // each searched through the text twice per failed attempt
        StringBuilder name = new StringBuilder("홍길동");
        for (int w = 0; w < 1300; w++) {
            name.append(' ');
            for (int c = 0; c < 16; c++) {
                name.append((char) ('가' + (w * 16 + c) % 11000));
            }
        }
        java.util.Set<String> terms = PatientDataMask.searchTerms(List.of(name.toString()), PatientDataMask.LONGEST_TEXT);
        assertThat(terms).hasSizeLessThanOrEqualTo(PatientDataMask.MOST_PARTS * 29).contains("홍길동", "길동");
        assertThat(PatientDataMask.mask("환자 홍길동 님 없음", List.of(name.toString()))).isEqualTo("환자 *** 님 없음");
        // the last part too (a family name written last)
        String last = name.substring(name.lastIndexOf(" ") + 1);
        assertThat(PatientDataMask.mask("환자 " + last + " 없음", List.of(name.toString()))).isEqualTo("환자 *** 없음");
    }

    @org.junit.jupiter.api.Test
    void logsCarryADownstreamCodeOnlyWhenItIsAnIdentifierWithoutANumber() {
        assertThat(Outcome.businessFailure("FORM_NOT_REGISTERED", "x").failureCode()).isEqualTo("FORM_NOT_REGISTERED");
        assertThat(Outcome.businessFailure(null, "x").failureCode()).isEqualTo("(no code)");
        assertThat(Outcome.businessFailure("NO_PATIENT_01012345678", "x").failureCode()).isEqualTo("(non-standard code)");
        assertThat(Outcome.businessFailure("환자 김구 없음", "x").failureCode()).isEqualTo("(non-standard code)");
    }

    @org.junit.jupiter.api.Test
    void theCorpusHasAtLeastThirtyMessagesAndRowValuesOfEveryKind() {
        assertThat(corpus().count()).isGreaterThanOrEqualTo(30);
        assertThat(PatientDataMask.mask(null, KIM)).isNull();
        assertThat(PatientDataMask.mask("김구", java.util.Arrays.asList(null, "", " "))).isEqualTo("김구");
    }

    /** A sender's name written masked, abridged or with digits masks nothing: a text quoting the patient is then withheld. */
    @Test
    void aNameTheSenderWroteMaskedIsNoNameToMaskWith() {
        for (String whole : List.of("박지훈", "김구", "John Doe", "O'Brien-Smith", "O\u2019Brien", "d'Arc", "山田 太郎", "Ｊｏｈｎ", "Zoë",
                "남궁·민수", "José María", "محمد علي", "สมชาย ใจดี")) {
            assertThat(PatientDataMask.wholeName(whole)).as(whole).isTrue();
        }
        for (String masked : java.util.Arrays.asList(null, "", " ", "박", "박*훈", "박＊훈", "홍○동", "홍X동", "박Ο훈", "김ㅇㅇ",
                "박ㅇ훈", "김모", "王某", "...", " - ", "J. Doe", "John D.", "O' Brien", "J. D*e", "***", "P123", "홍길동2")) {
            assertThat(PatientDataMask.wholeName(masked)).as(masked).isFalse();
        }
    }
}
