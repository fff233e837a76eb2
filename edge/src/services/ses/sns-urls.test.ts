import { describe, expect, test } from 'vitest';
import { snsUrl } from './sns-urls.js';

const PEM = 'SimpleNotificationService-01d088a6f77103d0fe307c0069e40ed6.pem';

describe('snsUrl', () => {
  test.each([
    `https://sns.us-east-1.amazonaws.com/${PEM}`,
    `https://sns.eu-central-1.amazonaws.com/${PEM}`,
    `https://sns.us-gov-west-1.amazonaws.com/${PEM}`,
    `https://sns.cn-north-1.amazonaws.com.cn/${PEM}`,
  ])('takes the certificate at %s', (url) => {
    expect(snsUrl(url, 'SigningCertURL', [])).toEqual({ url: new URL(url) });
  });

  test.each([
    [`http://sns.us-east-1.amazonaws.com/${PEM}`, 'SigningCertURL must be https'],
    [`https://sns.us-east-1.amazonaws.com.evil.test/${PEM}`, 'must be on an SNS host'],
    [`https://evil.test/sns.us-east-1.amazonaws.com/${PEM}`, 'must be on an SNS host'],
    [`https://s3.amazonaws.com/${PEM}`, 'must be on an SNS host'],
    [`https://sns.amazonaws.com/${PEM}`, 'must be on an SNS host'],
    [`https://x@sns.us-east-1.amazonaws.com/${PEM}`, 'must be on an SNS host'],
    [`https://sns.us-east-1.amazonaws.com:8443/${PEM}`, 'must be on an SNS host'],
    ['https://sns.us-east-1.amazonaws.com/cert.txt', 'SigningCertURL must name a .pem file'],
    ['not a url', 'SigningCertURL is not a URL'],
  ])('refuses the certificate at %s', (url, problem) => {
    const result = snsUrl(url, 'SigningCertURL', []);
    expect('problem' in result && result.problem).toContain(problem);
  });

  test('a SubscribeURL needs no .pem path, the same host rule', () => {
    const ok = 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn&Token=t';
    expect(snsUrl(ok, 'SubscribeURL', [])).toEqual({ url: new URL(ok) });
    expect(snsUrl('https://example.org/?Action=ConfirmSubscription', 'SubscribeURL', [])).toEqual({ problem: 'SubscribeURL must be on an SNS host (sns.<region>.amazonaws.com), not example.org' });
  });

  test('a listed prefix is trusted as it is parsed, and only it', () => {
    const prefixes = ['http://127.0.0.1:9999/'];
    expect(snsUrl(`http://127.0.0.1:9999/certs/${PEM}`, 'SigningCertURL', prefixes)).toHaveProperty('url');
    expect(snsUrl('http://127.0.0.1:9999/certs/x.txt', 'SigningCertURL', prefixes)).toHaveProperty('problem');
    expect(snsUrl(`http://127.0.0.1:99999/${PEM}`, 'SigningCertURL', prefixes)).toHaveProperty('problem');
    expect(snsUrl(`http://127.0.0.1:9999@evil.test/${PEM}`, 'SigningCertURL', prefixes)).toHaveProperty('problem');
    expect(snsUrl(`http://127.0.0.1:9998/${PEM}`, 'SigningCertURL', prefixes)).toHaveProperty('problem');
  });
});
