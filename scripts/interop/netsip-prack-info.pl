#!/usr/bin/perl
# Net::SIP (libnet-sip-perl) calls a target with `Require: 100rel` (RFC 3262) and, once the call
# is up, presses keys in SIP INFO (application/dtmf-relay). Net::SIP has no PRACK of its own:
# this script PRACKs each reliable provisional (RSeq + Require: 100rel) itself, as a Net::SIP
# request on the same leg. Progress goes to stdout as JSON lines:
#   {"event":"ready"} {"event":"provisional","code":180,"rseq":N,"reliable":1}
#   {"event":"prack-sent","rack":"N 1 INVITE"} {"event":"established"}
#   {"event":"info","digit":"5","code":200} {"event":"bye","code":200}
# Exit status 0 when the call was established, every INFO got 200 and the BYE got 200.
#
# usage: netsip-prack-info.pl --local 127.0.0.1:PORT --to sip:echo@127.0.0.1:5060 \
#          --send tone.pcmu [--keys 159#] [--seconds 2] [--debug N]
use strict;
use warnings;
use Getopt::Long qw(:config posix_default);
use IO::Handle;
use JSON::PP;
use Net::SIP;
use Net::SIP::Debug;

STDOUT->autoflush(1);
my %o = (seconds => 2, keys => '159#');
GetOptions(\%o, 'local=s', 'to=s', 'send=s', 'keys=s', 'seconds=f', 'debug=i') or die "bad options\n";
defined $o{$_} or die "--$_ is required\n" for qw(local to send);
Net::SIP::Debug->level($o{debug}) if $o{debug};
my $json = JSON::PP->new->canonical;
sub emit { print $json->encode({@_}), "\n" }

my $ua = Net::SIP::Simple->new(from => "sip:netsip\@$o{local}", leg => $o{local});
my ($leg) = $ua->{dispatcher}->get_legs();
emit(event => 'ready');

my %pracked;
my $call = $ua->invite($o{to},
    init_media => $ua->rtp('send_recv', $o{send}, -1),
    cb_rtp_done => sub {},
    sip_header => { 'Require' => '100rel', 'Supported' => '100rel' },
    cb_preliminary => sub {
        my ($call, $code, $packet) = @_;
        my $rseq = $packet->get_header('rseq');
        my $require = join(',', $packet->get_header('require') // ());
        my $reliable = (defined $rseq && $require =~ /\b100rel\b/i) ? 1 : 0;
        emit(event => 'provisional', code => 0 + $code, rseq => defined $rseq ? 0 + $rseq : undef, reliable => $reliable);
        return if !$reliable || $pracked{$rseq}++;
        my ($cseq) = $packet->cseq =~ /^(\d+)/;
        my ($target) = ($packet->get_header('contact') // '') =~ /<([^>]+)>/;
        my $rack = "$rseq $cseq INVITE";
        # The PRACK takes the call's next CSeq, so the INFOs and the BYE that follow keep counting up.
        my $seq = ++$call->{ctx}{cseq};
        my $prack = Net::SIP::Request->new('PRACK', $target || $o{to}, {
            'from' => $packet->get_header('from'),
            'to' => $packet->get_header('to'),
            'call-id' => $packet->callid,
            'cseq' => "$seq PRACK",
            'rack' => $rack,
            'max-forwards' => 70,
            'contact' => "<sip:netsip\@$o{local}>",
        }, '');
        $ua->{dispatcher}->deliver($prack, leg => $leg);
        emit(event => 'prack-sent', rack => $rack);
    },
    ring_time => 5,
);
if (!$call || $call->error) {
    my $code = ($call && $call->error) || $ua->error || 'unknown';
    emit(event => 'failed', code => ($code =~ /(\d{3})/ ? 0 + $1 : undef), error => "$code");
    exit 2;
}
emit(event => 'established');

my $exit = 0;
for my $key (split //, $o{keys}) {
    my ($done, $code);
    $call->request('INFO', "Signal=$key\r\nDuration=160\r\n",
        'content-type' => 'application/dtmf-relay',
        cb_final => sub {
            my ($status, $self, $info) = @_;
            $code = $info->{code} || ($info->{packet} && $info->{packet}->code) || 0;
            $done = 1;
        });
    $ua->loop(3, \$done);
    emit(event => 'info', digit => $key, code => $code ? 0 + $code : undef);
    $exit = 4 unless $code && $code =~ /^2\d\d$/;
}

$ua->loop($o{seconds});
my ($bye_done, $bye_code);
$call->{endpoint}->new_request('BYE', $call->{ctx}, sub {
    my ($endpoint, $ctx, $errno, $code) = @_;
    return if $code && $code =~ /^1\d\d$/;
    $bye_code = $code || 0;
    $bye_done = 1;
    $call->cleanup;
});
$ua->loop(5, \$bye_done);
emit(event => 'bye', code => $bye_code);
$exit = 3 unless $bye_code && $bye_code =~ /^2\d\d$/;
exit $exit;
