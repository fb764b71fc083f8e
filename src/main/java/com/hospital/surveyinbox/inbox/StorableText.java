package com.hospital.surveyinbox.inbox;

/**
 * What text the inbox can store, query and send on as it was received: PostgreSQL refuses a NUL in text, and its
 * driver (like every lenient UTF-8 encoder) writes half of a surrogate pair as {@code ?}. The reception's
 * validation, the operator API's filters and the masking of downstream texts ask the same questions here.
 */
public final class StorableText {

    private StorableText() {
    }

    /** A C0 control character or DEL. */
    public static boolean isControl(int c) {
        return c <= 0x1F || c == 0x7F;
    }

    /** Whether {@code text} holds neither a control character nor an unpaired surrogate. */
    public static boolean isText(String text) {
        return text.chars().noneMatch(StorableText::isControl) && !hasUnpairedSurrogate(text);
    }

    /** Whether {@code text} holds a surrogate that is not half of a pair. */
    public static boolean hasUnpairedSurrogate(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }
}
