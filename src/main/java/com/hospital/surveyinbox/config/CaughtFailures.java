package com.hospital.surveyinbox.config;

import org.apache.camel.Exchange;
import org.apache.camel.ExchangeExtension;
import org.apache.camel.ExchangePropertyKey;
import org.springframework.stereotype.Component;

/**
 * A failure a {@code doCatch} turned into a result is over, but Camel keeps two marks of it on the exchange: "failure
 * handled" (set by the error handler of the sub-route the failure came from, on its way to the catch) and the
 * redelivery headers of a statement that was tried again. With the first, Camel's error handler takes any later
 * failure of the exchange as dealt with already: no {@code onException} at all, so a statement the database did not
 * take after a failed registration (the FAILED or DEAD outcome, the DEAD reply) was neither tried again nor logged;
 * with the second, a later statement finds the tries spent. Steps {@code inbox-process-forget-failures}
 * ({@code routes/inbox-process.camel.yaml}, after the registration), {@code inbox-receive-forget-failures} (after a
 * synchronous registration), {@code inbox-reply-forget-failures} and
 * {@code inbox-reply-forget-own-failures} (the reply's first and last steps) clear both. Takes the {@link Exchange}: the marks are Camel's own and nowhere else.
 */
@Component("caughtFailures")
public class CaughtFailures {

    /** The exchange property holding the last statement try {@link #statementTry} saw. */
    static final String LAST_STATEMENT_TRY = "inboxLastStatementTry";

    private record StatementTry(String statement, Integer counter) {
    }

    public void forget(Exchange exchange) {
        ExchangeExtension extension = exchange.getExchangeExtension();
        extension.setFailureHandled(false);
        extension.setErrorHandlerHandled(null);
        extension.setRedeliveryExhausted(false);
        forgetTries(exchange);
    }

    /** Camel's count of a step's tries (CamelRedeliveryCounter, CamelRedeliveryMaxCounter, CamelRedelivered). */
    private static void forgetTries(Exchange exchange) {
        exchange.getMessage().removeHeaders("CamelRedelivery*");
        exchange.getMessage().removeHeader(Exchange.REDELIVERED);
    }

    /**
     * Before every try of a camel-sql statement of the context (interceptor {@code inbox-statement-tries},
     * {@code routes/inbox-downstream.camel.yaml}): a statement's first try starts with none of its tries spent. Camel
     * counts a step's tries in message headers that outlive the step (and a {@code variableReceive} puts them back
     * after it), so a statement after one that was tried again found its tries spent: the successor's lookup after an
     * outcome taken on its fourth try failed for good at its first failure. A try is this statement's redelivery when
     * the previous try was of the same statement and the counter moved by one since; anything else is a first try.
     */
    public void statementTry(Exchange exchange) {
        String statement = exchange.getProperty(ExchangePropertyKey.INTERCEPTED_ENDPOINT, String.class);
        Integer counter = exchange.getMessage().getHeader(Exchange.REDELIVERY_COUNTER, Integer.class);
        StatementTry last = exchange.getProperty(LAST_STATEMENT_TRY, StatementTry.class);
        boolean redelivery = counter != null && last != null && last.statement().equals(statement)
                && counter == (last.counter() == null ? 1 : last.counter() + 1);
        if (counter != null && !redelivery) {
            forgetTries(exchange);
            counter = null;
        }
        exchange.setProperty(LAST_STATEMENT_TRY, new StatementTry(statement, counter));
    }
}
