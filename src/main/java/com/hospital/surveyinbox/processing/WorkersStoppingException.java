package com.hospital.surveyinbox.processing;

import java.util.concurrent.RejectedExecutionException;

/**
 * A record refused because this instance is stopping ({@link ProcessingWorkers#stopTakingWork}): not started,
 * so no row is cut off by the shutdown's deadline halfway through its registration (left PROCESSING for
 * stuck-processing-after, an attempt charged, DEAD if it was the last). The row keeps its state and the record's
 * offset is not committed: the partition's next owner reads it again ({@code routes/inbox-process.camel.yaml},
 * {@code inbox-process-stopping}); the redelivery job is the net.
 */
public class WorkersStoppingException extends RejectedExecutionException {

    public WorkersStoppingException() {
        super("this instance is stopping: the record is not started; the partition's next owner reads it again");
    }
}
