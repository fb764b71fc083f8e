package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.inbox.StorableText;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Masks patient data in text a downstream returned, before that text is stored ({@code last_error}, the
 * attempt history, reply reasons) and so before any operator sees it (CONTRACT §6: a downstream error message
 * may quote the patient, in whatever wording). Two kinds of masking, both replacing the span with
 * {@value #MASK}:
 * <ul>
 *   <li><b>The row's own values</b> (patno, patNm, mobileNo — from the message and from the legacy patient
 *       record), however they are written: compared after Unicode compatibility folding (full-width digits and
 *       letters, half-width kana), in any letter case, katakana as hiragana, ignoring spaces and punctuation
 *       ({@code 010-1234-5678}, {@code 010 1234 5678} and {@code 01012345678} are one number; {@code 김 구} is
 *       {@code 김구}). A name is masked whole and by each of its parts of two characters or more (a two-letter
 *       Hangul name included). Values written in Latin letters or digits are masked only as whole words, so a
 *       name {@code Li} does not eat {@code FORM_NOT_DISTRIBUTED}; Hangul, kana and kanji are masked wherever
 *       they occur (a particle follows the name directly: {@code 김구님}).</li>
 *   <li><b>Shapes of personal data, whoever they belong to:</b> phone numbers (Korean and Japanese domestic
 *       formats, E.164), resident registration numbers, e-mail addresses and dates (a date of birth cannot be
 *       told from another date by its shape; a downstream's reason loses nothing an operator needs by it).</li>
 * </ul>
 * Codes stay readable: {@code FORM_NOT_REGISTERED}, {@code UNREG-0}, {@code F100}, group codes. Logs never get
 * the text at all, only the downstream's {@code code}.
 */
public final class PatientDataMask {

    static final String MASK = "***";
    /** Digits-only values shorter than this are not masked: they would hide codes and counts, not patients. */
    private static final int SHORTEST_NUMBER = 4;
    /** A name of two characters ({@code 김구}) is a name. */
    private static final int SHORTEST_TEXT = 2;

    /** Longest downstream text kept (characters): a reason is a sentence, not a document; bounds the masking's work. */
    static final int LONGEST_TEXT = 2000;
    /** Characters masked past the cut, so that a value the cut falls in is masked whole (a phone, a name part). */
    private static final int CUT_MARGIN = 64;

    /**
     * Longest unbroken East Asian name part whose prefixes and suffixes are masked too ({@link #nameEnds}). A family
     * or given name is a few characters; a longer run is masked whole only. The message's patient values have no
     * length limit (CONTRACT §1), and every end of an n-character run is n² characters of work: a 20,000-character
     * name made one mask take seconds and gigabytes.
     */
    static final int LONGEST_NAME_PART = 16;

    /**
     * Parts of one value searched apart ({@link #searchTerms}): the first ones and the last (often the family name);
     * a name has a few, a phone number three. The others of a longer value are searched as part of the whole value only: a 60 KB name of 1,300 distinct words gave 39,000 terms, each searched through the
     * text, twice per failed attempt.
     */
    static final int MOST_PARTS = 8;

    /** Separators a number or name may be written with beyond ASCII punctuation: minus sign, long vowel mark, dashes. */
    private static final String SEPARATORS = "\u2212\u30FC\u2010\u2011\u2012\u2013\u2014\u2015\uFF70\u00B7\u30FB";
    private static final String SEP = "[\\s.\\-" + SEPARATORS + "]";

    /** Starts only where a run of address characters starts, so a long text without '@' is scanned once. */
    private static final Pattern EMAIL = Pattern.compile(
            "(?<![\\p{L}\\p{N}._%+-])[\\p{L}\\p{N}._%+-]++@[\\p{L}\\p{N}-]+(?:\\.[\\p{L}\\p{N}-]+)+");
    /**
     * Korean resident registration number: birth date, then the 7-digit rest (first digit 1-8), also as it is usually
     * displayed, the rest masked after its first digit ({@code 900102-1******}: the birth date and sex still show).
     */
    private static final Pattern RRN = Pattern.compile("(?<!\\d)\\d{6}\\s*[-‐–]?\\s*[1-8][\\d*]{6}(?![\\d*])");
    /** A domestic number (Korea, Japan): trunk 0, area or mobile prefix, then two groups; 9 to 11 digits. */
    private static final Pattern DOMESTIC_PHONE = Pattern.compile(
            "(?<![\\d+])\\(?0\\d{1,4}\\)?(?:" + SEP + "|\\))*\\d{1,4}" + SEP + "*\\d{4}(?!\\d)");
    /**
     * A domestic number parted by '/' or '_' ({@code 010/9876/5432}), not inside a word, a code or a path
     * ({@code GRP_010_2024_0001}, {@code /surveys/0012/2024/0001} stay readable).
     */
    private static final Pattern SLASHED_PHONE = Pattern.compile(
            "(?<![\\d+\\p{L}_/])0\\d{1,3}([/_])\\d{3,4}\\1\\d{4}(?![\\d\\p{L}_/])");
    /** E.164, with or without separators: +, country code, 8 to 15 digits in all. */
    private static final Pattern INTERNATIONAL_PHONE = Pattern.compile(
            "\\+\\s*\\d{1,3}(?:" + SEP + "*\\(?\\d{1,5}\\)?){1,5}");
    /** Korea (82) or Japan (81) written without '+': {@code 82-10-1234-5678}, {@code 0082 10 1234 5678}. */
    private static final Pattern COUNTRY_PREFIXED_PHONE = Pattern.compile(
            "(?<![\\d+])(?:00)?8[12]" + SEP + "*\\(?0?\\d{1,2}\\)?" + SEP + "*\\d{3,4}" + SEP + "*\\d{4}(?!\\d)");
    private static final Pattern DATE = Pattern.compile(String.join("|",
            // 1990-01-02, 1990.1.2, 1990/01/02, 1990年1月2日, 1990년 1월 2일
            "(?<!\\d)(?:19|20)\\d{2}\\s*[-./년年]\\s*(?:0?[1-9]|1[0-2])\\s*[-./월月]\\s*(?:0?[1-9]|[12]\\d|3[01])\\s*[일日]?(?!\\d)",
            // 19900102
            "(?<!\\d)(?:19|20)\\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\\d|3[01])(?!\\d)",
            // 02.01.1990, 02/01/1990
            "(?<!\\d)(?:0?[1-9]|[12]\\d|3[01])[./-](?:0?[1-9]|1[0-2])[./-](?:19|20)\\d{2}(?!\\d)",
            // 90.01.02, 02/01/90: two digits each (a time uses ':', an address or a version more groups, a code letters)
            "(?<![\\p{L}\\d_])(?<!\\d[./-])\\d{2}([./-])\\d{2}\\1\\d{2}(?![\\p{L}\\d_]|[./-]\\d)",
            // Japanese era: 平成2年1月2日
            "(?:明治|大正|昭和|平成|令和)\\s*(?:\\d{1,2}|元)\\s*年\\s*\\d{1,2}\\s*月\\s*\\d{1,2}\\s*日"));
    /**
     * A birth date after its label, in any short numeric form (생년월일 900102, DOB: 02/01/90): group 1 is masked, the
     * label stays. Matched on the folded (lower-case) text. A label as a lookbehind in DATE made that one pattern
     * two thirds of a mask's time (every position tried against every label length): 0.7 ms of a 2,000-character
     * text, 12 s for a bulk requeue's search through 10,000 reasons.
     */
    private static final Pattern BIRTH_DATE = Pattern.compile(
            "(?:생년월일|생일|dob|birth(?:day|date)?|生年月日)(\\s*[:：]?\\s*[0-9][0-9./\\-\\s]{4,12}[0-9])");

    private PatientDataMask() {
    }

    /** The text with the row's patient values and every shape of personal data masked; null for null. */
    public static String mask(String text, Collection<String> patientValues) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        // a longer text is masked a little past the cut and shown up to it: a value the cut falls in ("…010-1234")
        // would otherwise be neither the row's value nor a whole shape, and be kept as it is
        int shown = text.length();
        if (text.length() > LONGEST_TEXT) {
            text = text.substring(0, Math.min(text.length(), LONGEST_TEXT + CUT_MARGIN));
            shown = Character.isHighSurrogate(text.charAt(LONGEST_TEXT - 1)) ? LONGEST_TEXT - 1 : LONGEST_TEXT;
        }
        // first: a control character inside a value ("010", NUL, "1234…") would hide it from every pattern below
        text = printable(text);
        Folded folded = Folded.of(text, false);
        boolean[] masked = new boolean[text.length()];
        // the compact form only when there are values to look for (an operator read masks shapes alone)
        if (patientValues.stream().anyMatch(value -> value != null && !value.isBlank())) {
            Folded compact = Folded.of(text, true);
            for (String value : searchTerms(patientValues, compact.text.length())) {
                maskValue(text, compact, value, masked);
            }
        }
        for (Pattern shape : List.of(EMAIL, RRN, INTERNATIONAL_PHONE, COUNTRY_PREFIXED_PHONE, DOMESTIC_PHONE, SLASHED_PHONE, DATE, BIRTH_DATE)) {
            if (shape == EMAIL && folded.text.indexOf('@') < 0) {
                continue; // (a full-width ＠ is folded to @)
            }
            Matcher m = shape.matcher(folded.text);
            while (m.find()) {
                if (shape == INTERNATIONAL_PHONE || shape == DOMESTIC_PHONE || shape == COUNTRY_PREFIXED_PHONE) {
                    long digits = m.group().chars().filter(Character::isDigit).count();
                    if (digits < (shape == INTERNATIONAL_PHONE ? 8 : 9) || digits > 15) {
                        continue;
                    }
                }
                int group = shape == BIRTH_DATE ? 1 : 0;
                mark(masked, folded.start[m.start(group)], folded.end[m.end(group) - 1]);
            }
        }
        StringBuilder out = new StringBuilder(shown + 1);
        for (int i = 0; i < shown; ) {
            if (masked[i]) {
                out.append(MASK);
                while (i < shown && masked[i]) {
                    i++;
                }
            } else {
                out.append(text.charAt(i++));
            }
        }
        return shown < text.length() ? out.append('…').toString() : out.toString();
    }

    /**
     * The text as a stored reason may hold it: each control character (a downstream's NUL made PostgreSQL refuse
     * the row's outcome, which then stayed PROCESSING; a line break would start a new line wherever the reason is
     * logged or shown) a space, each half of a broken surrogate pair U+FFFD. Same length, same indices.
     */
    static String printable(String text) {
        // (and each invisible or reordering character, see invisible())
        char[] chars = text.toCharArray();
        for (int i = 0; i < chars.length; i++) {
            char c = chars[i];
            if (StorableText.isControl(c) || invisible(c)) {
                chars[i] = ' ';
            } else if (Character.isHighSurrogate(c) && i + 1 < chars.length && Character.isLowSurrogate(chars[i + 1])) {
                i++;
            } else if (Character.isSurrogate(c)) {
                chars[i] = '\uFFFD';
            }
        }
        return new String(chars);
    }

    /**
     * C1 controls (U+009B is a terminal's CSI: an operator reading the API in a terminal), bidi controls (U+202E
     * shows a text reversed), zero-width characters, soft hyphens, Hangul fillers and variation selectors (a name
     * with one inside was no longer the name to the mask, nor to a search) and line and paragraph separators: none
     * belongs in a stored reason.
     */
    static boolean invisible(char c) {
        return (c >= 0x80 && c <= 0x9F) || c == 0x00AD || c == 0x061C || c == 0x115F || c == 0x1160
                || (c >= 0x200B && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x2069)
                || c == 0x3164 || (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF || c == 0xFFA0;
    }

    /**
     * Each value folded and compacted, and of its parts the first {@link #MOST_PARTS} - 1 and the last; too short ones left out, and
     * those longer than the text they are looked for in ({@code longest}): they cannot occur in it.
     */
    static Set<String> searchTerms(Collection<String> values, int longest) {
        Set<String> terms = new LinkedHashSet<>();
        for (String value : values) {
            if (value == null || value.isBlank()) {
                continue;
            }
            value = printable(value); // as the text is: a value with a zero-width space in it is still the value
            List<String> candidates = new ArrayList<>();
            candidates.add(value);
            String[] parts = PARTS.split(Normalizer.normalize(value, Normalizer.Form.NFKC).strip());
            for (int i = 0; i < parts.length; i++) {
                if (i < MOST_PARTS - 1 || i == parts.length - 1) { // the first ones and the last (often the family name)
                    candidates.add(parts[i]);
                    candidates.addAll(nameEnds(parts[i]));
                }
            }
            for (String candidate : candidates) {
                String term = Folded.of(candidate, true).text;
                boolean digitsOnly = term.chars().allMatch(Character::isDigit);
                if (term.length() >= (digitsOnly ? SHORTEST_NUMBER : SHORTEST_TEXT) && term.length() <= longest) {
                    terms.add(term);
                }
                // a number with leading zeros is quoted without them too (a downstream that keeps patno as a number)
                String stripped = digitsOnly ? term.replaceFirst("^0+", "") : term;
                if (!stripped.equals(term) && stripped.length() >= SHORTEST_NUMBER) {
                    terms.add(stripped);
                }
            }
        }
        // longest first, so a value that contains another is masked whole
        return terms.stream().sorted((a, b) -> b.length() - a.length())
                .collect(java.util.stream.Collectors.toCollection(LinkedHashSet::new));
    }

    private static final Pattern PARTS = Pattern.compile("[\\s\\p{Punct}" + SEPARATORS + "]+", Pattern.UNICODE_CHARACTER_CLASS);

    /**
     * A name written without spaces in Hangul, kana or kanji ({@code 홍길동}, {@code 山田太郎}) is quoted by
     * its given name or family name alone too ({@code 길동님}, {@code 山田様}): every prefix and suffix of two
     * characters or more. Runs longer than {@link #LONGEST_NAME_PART} are not a name's parts: none.
     */
    private static List<String> nameEnds(String part) {
        List<String> ends = new ArrayList<>();
        if (part.length() >= 3 && part.length() <= LONGEST_NAME_PART
                && part.codePoints().allMatch(PatientDataMask::isEastAsianLetter)) {
            for (int n = 2; n < part.length(); n++) {
                ends.add(part.substring(0, n));
                ends.add(part.substring(part.length() - n));
            }
        }
        return ends;
    }

    /**
     * Whether a name as a sender wrote it can mask a text that quotes the patient: words of two letters or more,
     * parted by spaces or name punctuation only. A name written masked or abridged is not: {@code 박*훈}, {@code 홍○동},
     * {@code 김ㅇㅇ} (jamo), {@code 홍X동} (another script inside a Hangul word), {@code 김모}, {@code 王某} (the
     * "someone" placeholder), {@code J. Doe} (an initial), or with digits. Its parts are too short or not the name, so
     * a downstream's text quoting the real name ({@code 박지훈님}, {@code Jane Doe}) would pass through unmasked; the
     * text is then withheld. Refusing a real name withholds a text that could have been shown, no more.
     */
    public static boolean wholeName(String name) {
        if (name == null) {
            return false;
        }
        String folded = Normalizer.normalize(name, Normalizer.Form.NFKC).strip().replace('\u2019', '\'').replace('\u02BC', '\'');
        int total = 0;
        // an apostrophe joins one name (O'Brien, d'Arc): not a separator, not a letter
        for (String word : folded.split("[\\s.\\-" + SEPARATORS + "]+")) {
            int letters = 0;
            boolean eastAsian = false;
            boolean other = false;
            for (int i = 0; i < word.length(); ) {
                int c = word.codePointAt(i);
                i += Character.charCount(c);
                int type = Character.getType(c);
                if (type == Character.NON_SPACING_MARK || type == Character.COMBINING_SPACING_MARK || c == '\'') {
                    continue;
                }
                if (!Character.isLetter(c) || jamo(c) || c == '某') {
                    return false;
                }
                letters++;
                if (isEastAsianLetter(c)) {
                    eastAsian = true;
                } else {
                    other = true;
                }
            }
            if (letters == 1 || (eastAsian && other) || (letters == 2 && word.endsWith("모"))) {
                return false;
            }
            total += letters;
        }
        return total >= SHORTEST_TEXT; // punctuation alone ("...", "-") names nobody
    }

    /** A Hangul letter written alone (ㅇ, ㅁ: a mask), not a syllable. */
    private static boolean jamo(int c) {
        return (c >= 0x1100 && c <= 0x11FF) || (c >= 0x3130 && c <= 0x318F) || (c >= 0xA960 && c <= 0xA97F)
                || (c >= 0xD7B0 && c <= 0xD7FF) || (c >= 0xFFA0 && c <= 0xFFDC);
    }

    private static boolean isEastAsianLetter(int c) {
        Character.UnicodeScript script = Character.UnicodeScript.of(c);
        return script == Character.UnicodeScript.HANGUL || script == Character.UnicodeScript.HAN
                || script == Character.UnicodeScript.HIRAGANA || script == Character.UnicodeScript.KATAKANA;
    }

    private static void maskValue(String original, Folded compact, String term, boolean[] masked) {
        // what a neighbour must be for a match to be part of something else: a digit next to a number ("1234" inside
        // "512345"), a Latin letter next to a word ("Li" inside "DISTRIBUTED"), either next to a mix ("P778812"); a
        // letter glued to a number ("P20481234", "MRN20481234") or a digit to a name ("Smith2") does not make it another
        boolean digits = term.codePoints().anyMatch(Character::isDigit);
        boolean letters = term.codePoints().anyMatch(PatientDataMask::isLatinLetter);
        for (int at = compact.text.indexOf(term); at >= 0; at = compact.text.indexOf(term, at + 1)) {
            int from = compact.start[at];
            int to = compact.end[at + term.length() - 1];
            if ((digits || letters) && (touchesWord(original, from - 1, digits, letters) || touchesWord(original, to, digits, letters))) {
                continue;
            }
            mark(masked, from, to);
        }
    }

    private static boolean touchesWord(String text, int index, boolean digits, boolean letters) {
        if (index < 0 || index >= text.length()) {
            return false;
        }
        String folded = Normalizer.normalize(String.valueOf(text.charAt(index)), Normalizer.Form.NFKC);
        if (folded.isEmpty()) {
            return false;
        }
        int c = folded.codePointAt(0);
        return (digits && Character.isDigit(c)) || (letters && isLatinLetter(c));
    }

    private static boolean isLatinLetter(int c) {
        return Character.isLetter(c) && Character.UnicodeScript.of(c) == Character.UnicodeScript.LATIN;
    }

    private static void mark(boolean[] masked, int from, int to) {
        for (int i = Math.max(0, from); i < Math.min(masked.length, to); i++) {
            masked[i] = true;
        }
    }

    /**
     * The text folded for comparison — NFKC per character, lower case, katakana as hiragana — and, when
     * compact, without spaces and punctuation; each folded character knows the original span it came from.
     */
    private record Folded(String text, int[] start, int[] end) {

        static Folded of(String original, boolean compact) {
            StringBuilder text = new StringBuilder(original.length());
            int[] start = new int[original.length() * 4 + 4];
            int[] end = new int[start.length];
            for (int i = 0; i < original.length(); ) {
                int cp = original.codePointAt(i);
                int next = i + Character.charCount(cp);
                // ASCII and Hangul syllables are their own NFKC form (most of a reason's text): no Normalizer call
                String folded = cp < 0x80 ? String.valueOf((char) (cp >= 'A' && cp <= 'Z' ? cp + 32 : cp))
                        : cp >= 0xAC00 && cp <= 0xD7A3 ? String.valueOf((char) cp)
                        : Normalizer.normalize(new String(Character.toChars(cp)), Normalizer.Form.NFKC).toLowerCase(Locale.ROOT);
                for (int j = 0; j < folded.length(); j++) {
                    char c = folded.charAt(j);
                    if (c >= 'ァ' && c <= 'ヶ') {
                        c = (char) (c - 0x60); // katakana as hiragana: ヤマダ is やまだ
                    }
                    if (compact && (Character.isWhitespace(c) || Character.isSpaceChar(c) || isPunctuation(c)
                            || SEPARATORS.indexOf(c) >= 0)) {
                        continue;
                    }
                    if ((Character.getType(c) == Character.NON_SPACING_MARK || conjoiningVowelOrFinal(c)) && !text.isEmpty()) {
                        // half-width ﾀﾞ folds to た + a combining mark: composed again, it is だ; and a Hangul name
                        // written decomposed (NFD, as macOS and some stacks send it: ᄒ ᅩ ᆼ) is a syllable again (홍),
                        // else it never matched the name and passed unmasked
                        String composed = Normalizer.normalize(text.charAt(text.length() - 1) + String.valueOf(c),
                                Normalizer.Form.NFC);
                        if (composed.length() == 1) {
                            text.setCharAt(text.length() - 1, composed.charAt(0));
                            end[text.length() - 1] = next;
                            continue;
                        }
                    }
                    if (text.length() == start.length) {
                        start = java.util.Arrays.copyOf(start, start.length * 2);
                        end = java.util.Arrays.copyOf(end, end.length * 2);
                    }
                    start[text.length()] = i;
                    end[text.length()] = next;
                    text.append(c);
                }
                i = next;
            }
            return new Folded(text.toString(), start, end);
        }

        /** A Hangul jamo that joins the letter before it into a syllable (a medial vowel or a final consonant). */
        private static boolean conjoiningVowelOrFinal(char c) {
            return (c >= 0x1160 && c <= 0x11FF) || (c >= 0xD7B0 && c <= 0xD7FF);
        }

        private static boolean isPunctuation(char c) {
            return switch (Character.getType(c)) {
                case Character.DASH_PUNCTUATION, Character.CONNECTOR_PUNCTUATION, Character.START_PUNCTUATION,
                     Character.END_PUNCTUATION, Character.OTHER_PUNCTUATION, Character.INITIAL_QUOTE_PUNCTUATION,
                     Character.FINAL_QUOTE_PUNCTUATION -> true;
                default -> false;
            };
        }
    }
}
