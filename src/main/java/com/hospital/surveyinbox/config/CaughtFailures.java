package com.hospital.surveyinbox.config;

import org.apache.camel.Exchange;
import org.apache.camel.ExchangeExtension;
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

    public void forget(Exchange exchange) {
        ExchangeExtension extension = exchange.getExchangeExtension();
        extension.setFailureHandled(false);
        extension.setErrorHandlerHandled(null);
        extension.setRedeliveryExhausted(false);
        exchange.getMessage().removeHeaders("CamelRedelivery*");
        exchange.getMessage().removeHeader(Exchange.REDELIVERED);
    }
}
