package com.hospital.surveyinbox.processing;

import java.util.Collection;
import java.util.Comparator;

/**
 * Masks a row's own patient values (patno, patNm, mobileNo — from the message and from the legacy
 * patient record) in text a downstream returned, before that text is stored ({@code last_error},
 * reply reasons) or shown to operators (CONTRACT §6: a downstream error message may quote the patient).
 * Logs never get the text at all, only the downstream's {@code code}.
 */
public final class PatientDataMask {

    static final String MASK = "***";
    /** Shorter values would mask ordinary words and digits; real patient numbers, names and phones are longer. */
    private static final int SHORTEST_MASKED = 3;

    private PatientDataMask() {
    }

    public static String mask(String text, Collection<String> patientValues) {
        if (text == null) {
            return null;
        }
        String masked = text;
        // longest first, so a value that contains another is masked whole
        for (String value : patientValues.stream().filter(v -> v != null && v.strip().length() >= SHORTEST_MASKED)
                .map(String::strip).sorted(Comparator.comparingInt(String::length).reversed()).toList()) {
            masked = masked.replace(value, MASK);
        }
        return masked;
    }
}
